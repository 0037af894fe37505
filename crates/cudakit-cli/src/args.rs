//! The command line: a small hand-written parser (options in any order,
//! `--name value` and `--name=value`, `-o OUT` and `-oOUT`, `--` to end
//! options), the exit codes, and the error every command returns.

use std::collections::VecDeque;
use std::fmt;

use crate::json::Json;

/// How the process ends; `cudakit --help` documents these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// 0: success.
    Ok,
    /// 1: a failure at run time: verification failed, a compile error, a
    /// driver error.
    Failure,
    /// 2: no usable GPU, driver or NVRTC.
    NoGpu,
    /// 64: a usage error (`EX_USAGE` of sysexits.h).
    Usage,
}

impl Exit {
    /// The process exit status.
    pub(crate) fn code(self) -> i32 {
        match self {
            Exit::Ok => 0,
            Exit::Failure => 1,
            Exit::NoGpu => 2,
            Exit::Usage => 64,
        }
    }
}

/// Why a command did not succeed: the exit code, a message for people, and
/// fields for the `--json` object.
#[derive(Debug, Clone)]
pub(crate) struct CliError {
    pub(crate) exit: Exit,
    pub(crate) message: String,
    /// Extra fields of the JSON error object (a diagnosis, a compile log).
    pub(crate) json: Vec<(String, Json)>,
}

impl CliError {
    /// A usage error (exit 64).
    pub(crate) fn usage(message: impl Into<String>) -> CliError {
        CliError::new(Exit::Usage, message)
    }

    /// A run-time failure (exit 1).
    pub(crate) fn failure(message: impl Into<String>) -> CliError {
        CliError::new(Exit::Failure, message)
    }

    /// An error with an explicit exit code.
    pub(crate) fn new(exit: Exit, message: impl Into<String>) -> CliError {
        CliError {
            exit,
            message: message.into(),
            json: Vec::new(),
        }
    }

    /// Adds a field to the JSON error object.
    pub(crate) fn with_json(mut self, key: &str, value: impl Into<Json>) -> CliError {
        self.json.push((key.to_owned(), value.into()));
        self
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// One command-line word, classified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Token {
    /// An option as written (`--iters`, `-o`), with a value attached to it
    /// (`--iters=5`, `-oOUT`, `-DNAME=1`) when there was one.
    Flag(String, Option<String>),
    /// Anything else (and everything after `--`).
    Positional(String),
}

/// Short options whose value may be glued on (`-DNAME`, `-Iinclude`,
/// `-oout.ptx`); any other short option stands alone.
const GLUED_SHORT: &[char] = &['D', 'I', 'o'];

/// The words after the command name, consumed one at a time.
#[derive(Debug)]
pub(crate) struct Parser {
    words: VecDeque<String>,
    /// The command, for messages (`cudakit matmul`).
    command: String,
    options_ended: bool,
}

impl Parser {
    pub(crate) fn new(command: &str, words: impl IntoIterator<Item = String>) -> Parser {
        Parser {
            words: words.into_iter().collect(),
            command: command.to_owned(),
            options_ended: false,
        }
    }

    /// The next word, classified; `None` at the end.
    pub(crate) fn next_token(&mut self) -> Option<Token> {
        let word = self.words.pop_front()?;
        if self.options_ended {
            return Some(Token::Positional(word));
        }
        if word == "--" {
            self.options_ended = true;
            return self.next_token();
        }
        if let Some(long) = word.strip_prefix("--") {
            return Some(match long.split_once('=') {
                Some((name, value)) => Token::Flag(format!("--{name}"), Some(value.to_owned())),
                None => Token::Flag(word.clone(), None),
            });
        }
        let mut chars = word.chars();
        if chars.next() == Some('-') {
            if let Some(c) = chars.next() {
                let rest: String = chars.collect();
                if rest.is_empty() {
                    return Some(Token::Flag(format!("-{c}"), None));
                }
                if GLUED_SHORT.contains(&c) {
                    return Some(Token::Flag(format!("-{c}"), Some(rest)));
                }
                // `-x...` that is not a known glued option: report it whole.
                return Some(Token::Flag(word, None));
            }
        }
        Some(Token::Positional(word))
    }

    /// The value of `flag`: the attached one, or the next word.
    ///
    /// # Errors
    ///
    /// A usage error when there is no next word.
    pub(crate) fn value(
        &mut self,
        flag: &str,
        attached: Option<String>,
    ) -> Result<String, CliError> {
        if let Some(v) = attached {
            return Ok(v);
        }
        match self.words.pop_front() {
            Some(v) => Ok(v),
            None => Err(self.error(format!("{flag} needs a value"))),
        }
    }

    /// A usage error for an option this command does not know.
    pub(crate) fn unknown(&self, token: &Token) -> CliError {
        match token {
            Token::Flag(flag, _) => self.error(format!("unknown option {flag}")),
            Token::Positional(word) => self.error(format!("unexpected argument {word:?}")),
        }
    }

    /// A usage error about this command.
    pub(crate) fn error(&self, message: impl fmt::Display) -> CliError {
        CliError::usage(format!(
            "{}: {message}\nRun `{} --help` for its options.",
            self.command, self.command
        ))
    }

    /// Refuses a value attached to an option that takes none (`--json=1`).
    ///
    /// # Errors
    ///
    /// A usage error when there is one.
    pub(crate) fn no_value(&self, flag: &str, attached: &Option<String>) -> Result<(), CliError> {
        match attached {
            Some(v) => Err(self.error(format!("{flag} takes no value (got {v:?})"))),
            None => Ok(()),
        }
    }

    /// A whole number, with optional `_` separators, within `min..=max`.
    ///
    /// # Errors
    ///
    /// A usage error naming the option and the text.
    pub(crate) fn number(
        &self,
        flag: &str,
        text: &str,
        min: u64,
        max: u64,
    ) -> Result<u64, CliError> {
        let cleaned = text.trim().replace('_', "");
        let value: u64 = cleaned
            .parse()
            .map_err(|_| self.error(format!("{flag} expects a whole number, got {text:?}")))?;
        if value < min || value > max {
            return Err(self.error(format!(
                "{flag} must be between {min} and {max}, got {value}"
            )));
        }
        Ok(value)
    }

    /// A byte count: a number with an optional `K`, `M` or `G` suffix
    /// (binary units; `KiB`, `MiB`, `GiB` and a trailing `B` are accepted).
    ///
    /// # Errors
    ///
    /// A usage error naming the option and the text.
    pub(crate) fn bytes(
        &self,
        flag: &str,
        text: &str,
        min: u64,
        max: u64,
    ) -> Result<u64, CliError> {
        let bad = || {
            self.error(format!(
                "{flag} expects a size such as 4096, 64K, 256M or 1G, got {text:?}"
            ))
        };
        let t = text.trim();
        let t = t.strip_suffix('B').unwrap_or(t);
        let t = t.strip_suffix('i').unwrap_or(t);
        let (digits, shift) = match t.chars().last() {
            Some('K' | 'k') => (&t[..t.len() - 1], 10),
            Some('M' | 'm') => (&t[..t.len() - 1], 20),
            Some('G' | 'g') => (&t[..t.len() - 1], 30),
            _ => (t, 0),
        };
        let base: u64 = digits.replace('_', "").parse().map_err(|_| bad())?;
        let value = base.checked_mul(1u64 << shift).ok_or_else(bad)?;
        if value < min || value > max {
            return Err(self.error(format!(
                "{flag} must be between {min} and {max} bytes, got {value}"
            )));
        }
        Ok(value)
    }

    /// A seed: decimal or `0x` hex.
    ///
    /// # Errors
    ///
    /// A usage error naming the text.
    pub(crate) fn seed(&self, flag: &str, text: &str) -> Result<u64, CliError> {
        let t = text.trim().replace('_', "");
        let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            Some(hex) => u64::from_str_radix(hex, 16),
            None => t.parse::<u64>(),
        };
        parsed.map_err(|_| {
            self.error(format!(
                "{flag} expects a 64-bit number (decimal or 0x hex), got {text:?}"
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parser(words: &[&str]) -> Parser {
        Parser::new("cudakit test", words.iter().map(|w| w.to_string()))
    }

    fn tokens(words: &[&str]) -> Vec<Token> {
        let mut p = parser(words);
        std::iter::from_fn(|| p.next_token()).collect()
    }

    fn flag(name: &str, value: Option<&str>) -> Token {
        Token::Flag(name.to_owned(), value.map(str::to_owned))
    }

    #[test]
    fn words_are_classified() {
        assert_eq!(
            tokens(&[
                "k.cu",
                "--arch",
                "sm_90",
                "--iters=5",
                "-o",
                "out.ptx",
                "-DN=4",
                "-Iinc",
                "-h",
                "-x",
                "-xyz",
                "--",
                "--not-a-flag",
            ]),
            vec![
                Token::Positional("k.cu".into()),
                flag("--arch", None),
                Token::Positional("sm_90".into()),
                flag("--iters", Some("5")),
                flag("-o", None),
                Token::Positional("out.ptx".into()),
                flag("-D", Some("N=4")),
                flag("-I", Some("inc")),
                flag("-h", None),
                flag("-x", None),
                flag("-xyz", None),
                Token::Positional("--not-a-flag".into()),
            ]
        );
        assert_eq!(tokens(&["-"]), vec![Token::Positional("-".into())]);
        assert_eq!(tokens(&["--e=a=b"]), vec![flag("--e", Some("a=b"))]);
    }

    #[test]
    fn values_come_attached_or_next() {
        let mut p = parser(&["--m", "64", "--k"]);
        let Some(Token::Flag(f, v)) = p.next_token() else {
            panic!()
        };
        assert_eq!(p.value(&f, v).unwrap(), "64");
        let Some(Token::Flag(f, v)) = p.next_token() else {
            panic!()
        };
        let err = p.value(&f, v).unwrap_err();
        assert_eq!(err.exit, Exit::Usage);
        assert!(err.message.contains("--k needs a value"), "{}", err.message);
        assert!(
            err.message.contains("cudakit test --help"),
            "{}",
            err.message
        );
    }

    #[test]
    fn numbers_sizes_and_seeds() {
        let p = parser(&[]);
        assert_eq!(p.number("--m", "4_096", 1, 10_000).unwrap(), 4096);
        assert!(p.number("--m", "0", 1, 10).is_err());
        assert!(p.number("--m", "-3", 1, 10).is_err());
        assert!(p.number("--m", "1e3", 1, 10_000).is_err());
        assert_eq!(p.bytes("--bytes", "256M", 1, u64::MAX).unwrap(), 256 << 20);
        assert_eq!(p.bytes("--bytes", "64KiB", 1, u64::MAX).unwrap(), 64 << 10);
        assert_eq!(p.bytes("--bytes", "1g", 1, u64::MAX).unwrap(), 1 << 30);
        assert_eq!(p.bytes("--bytes", "4096", 1, u64::MAX).unwrap(), 4096);
        assert!(p.bytes("--bytes", "lots", 1, u64::MAX).is_err());
        assert!(p.bytes("--bytes", "99999999999G", 1, u64::MAX).is_err());
        assert_eq!(p.seed("--seed", "0x10").unwrap(), 16);
        assert_eq!(p.seed("--seed", "42").unwrap(), 42);
        assert!(p.seed("--seed", "0xzz").is_err());
        assert!(p.no_value("--json", &Some("1".into())).is_err());
    }
}
