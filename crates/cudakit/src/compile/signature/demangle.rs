//! A demangler for the part of the Itanium C++ ABI that kernel names use.
//!
//! A C++ kernel's lowered name is `_Z` + its name + its parameter types. This
//! reads: plain, internal-linkage (`L`) and nested (`N...E`) names, with
//! namespaces and the anonymous namespace; template arguments (`I...E`):
//! types, integer literals (`L<type><n>E`), template-parameter expressions
//! (`XT_E`) and packs (`J...E`, expanded by `Dp`); the builtin type codes;
//! `P`, `R`, `O`, `K`, `V`, `r`; substitutions (`S_`, `S<seq>_`) and the
//! `St`, `Sa`, `Sb`, `Ss`, `Si`, `So`, `Sd` abbreviations; template
//! parameters (`T_`, `T<n>_`); CUDA's vector types, `__half` and
//! `__nv_bfloat16`, which mangle as the plain structs they are (`6float4`).
//!
//! Constructs outside that subset whose structure can still be followed
//! (function types, arrays, pointers to members, ABI tags, vendor and
//! GCC-vector types, non-type arguments other than integers) make the
//! parameter types that contain them [`CType::Unknown`]; so does a
//! substitution that refers past a pack expansion, whose numbering this
//! does not model. Anything else (local names, operators, expressions,
//! member functions) is an error for the whole name. Neither ever yields a
//! wrong type.

use std::fmt;

use super::{write_path, CType, NameComponent, NamedType, Qualifiers, Style, TemplateArg};

/// A demangled kernel signature.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Signature {
    /// The namespaces around the function, outermost first
    /// (`["app", "detail"]`; an anonymous one is `(anonymous namespace)`).
    pub namespace: Vec<String>,
    /// The function's own name, without scope or template arguments: the
    /// plain name a user looks a kernel up by.
    pub name: String,
    /// The function's template arguments, for a template specialisation.
    pub template_args: Option<Vec<TemplateArg>>,
    /// The return type, which the mangling carries for templates only.
    pub return_type: Option<CType>,
    /// The parameter types, packs expanded; [`CType::Unknown`] for one that
    /// could not be read in full.
    pub params: Vec<CType>,
}

impl Signature {
    /// `ns::name`, without template arguments.
    pub fn qualified_name(&self) -> String {
        let mut text = String::new();
        for ns in &self.namespace {
            text.push_str(ns);
            text.push_str("::");
        }
        text.push_str(&self.name);
        text
    }

    /// Whether every parameter type is fully known.
    pub fn is_fully_known(&self) -> bool {
        self.params.iter().all(CType::is_known)
    }
}

impl fmt::Display for Signature {
    /// `void ns::name<args>(params)` in C spelling; with `{:#}`, exactly as
    /// `c++filt` prints it (`float const*`), except that qualifiers print in
    /// one fixed order (`const volatile`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let style = Style::of(f);
        if let Some(ret) = &self.return_type {
            super::write_type(f, ret, style)?;
            f.write_str(" ")?;
        }
        let mut path: Vec<NameComponent> = self
            .namespace
            .iter()
            .map(|ns| NameComponent::plain(ns.as_str()))
            .collect();
        path.push(NameComponent {
            name: self.name.clone(),
            template_args: self.template_args.clone(),
        });
        write_path(f, &path, style)?;
        f.write_str("(")?;
        for (i, param) in self.params.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            super::write_type(f, param, style)?;
        }
        f.write_str(")")
    }
}

/// Why a mangled name could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DemangleError {
    /// The name does not start with `_Z`: an `extern "C"` name, or not a
    /// C++ function's.
    NotMangled,
    /// The name ends in the middle of a construct.
    UnexpectedEnd,
    /// A character that cannot start or continue the construct at hand.
    Unexpected {
        /// Byte offset in the name.
        offset: usize,
        /// The character found.
        found: char,
        /// What was expected there.
        expected: &'static str,
    },
    /// A substitution (`S<n>_`) or template parameter (`T<n>_`) that refers
    /// to nothing.
    BadReference {
        /// Byte offset in the name.
        offset: usize,
    },
    /// A construct outside the subset whose structure cannot be followed.
    Unsupported {
        /// Byte offset in the name.
        offset: usize,
        /// The construct.
        what: &'static str,
    },
    /// A number too large to be meant.
    Overflow {
        /// Byte offset in the name.
        offset: usize,
    },
}

impl fmt::Display for DemangleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DemangleError::NotMangled => f.write_str("not an Itanium-mangled name (no _Z prefix)"),
            DemangleError::UnexpectedEnd => f.write_str("mangled name ends early"),
            DemangleError::Unexpected {
                offset,
                found,
                expected,
            } => write!(
                f,
                "mangled name: unexpected '{found}' at byte {offset}, expected {expected}"
            ),
            DemangleError::BadReference { offset } => write!(
                f,
                "mangled name: the reference at byte {offset} refers to nothing"
            ),
            DemangleError::Unsupported { offset, what } => {
                write!(f, "mangled name: {what} at byte {offset} are not supported")
            }
            DemangleError::Overflow { offset } => {
                write!(f, "mangled name: number too large at byte {offset}")
            }
        }
    }
}

impl std::error::Error for DemangleError {}

type Result<T> = std::result::Result<T, DemangleError>;

/// Reads a mangled kernel name: `_Z5saxpyIfEvT_PKS0_PS0_i` is
/// `void saxpy<float>(float, const float*, float*, int)`.
///
/// # Errors
/// [`DemangleError::NotMangled`] for a name without the `_Z` prefix; another
/// [`DemangleError`] where the name's structure cannot be followed. A
/// construct that can be followed but not read makes the parameters that
/// contain it [`CType::Unknown`] instead.
pub fn demangle(symbol: &str) -> Result<Signature> {
    let rest = symbol.strip_prefix("_Z").ok_or(DemangleError::NotMangled)?;
    let mut parser = Parser {
        text: rest.as_bytes(),
        pos: 0,
        base: 2,
        subs: Vec::new(),
        unreliable_from: None,
        function_args: Vec::new(),
        expansion: None,
        pack_len: None,
        depth: 0,
    };
    let signature = parser.encoding()?;
    if parser.pos != parser.text.len() {
        return Err(parser.unexpected("the end of the name"));
    }
    Ok(signature)
}

/// A type with its top-level qualifiers.
#[derive(Debug, Clone)]
struct Qual {
    ty: CType,
    quals: Qualifiers,
}

impl Qual {
    fn plain(ty: CType) -> Qual {
        Qual {
            ty,
            quals: Qualifiers::NONE,
        }
    }

    const UNKNOWN: Qual = Qual {
        ty: CType::Unknown,
        quals: Qualifiers::NONE,
    };
}

/// A name as parsed: its components, and whether any part of it could not
/// be read.
#[derive(Debug, Clone)]
struct Name {
    parts: Vec<NameComponent>,
    unknown: bool,
}

impl Name {
    /// The class or enum type the name denotes.
    fn into_type(self) -> CType {
        if self.unknown {
            return CType::Unknown;
        }
        let ty = match self.parts.as_slice() {
            [only] if only.template_args.is_none() => CType::from_global_name(&only.name),
            _ => CType::Named(NamedType { path: self.parts }),
        };
        if ty.is_known() {
            ty
        } else {
            CType::Unknown
        }
    }
}

/// One substitution candidate.
#[derive(Debug, Clone)]
enum Sub {
    /// A type (class types included).
    Type(Qual),
    /// A prefix or template name that is not (yet) a type.
    Name(Name),
    /// A candidate this parser counts but does not model.
    Unknown,
}

struct Parser<'a> {
    text: &'a [u8],
    pos: usize,
    /// Offset of `text` in the symbol, for error offsets.
    base: usize,
    subs: Vec<Sub>,
    /// Substitutions from here on follow a pack expansion, whose candidates
    /// are not modelled: a reference to one is unknown.
    unreliable_from: Option<usize>,
    /// The function's template arguments, that `T_` refers to.
    function_args: Vec<TemplateArg>,
    /// In a pack expansion: `Some(None)` while counting, `Some(Some(i))`
    /// while reading element `i`.
    expansion: Option<Option<usize>>,
    /// The length of the pack met while counting.
    pack_len: Option<usize>,
    /// How deeply types nest here, bounded by [`MAX_DEPTH`].
    depth: usize,
}

/// The deepest nesting of types read; real kernel names stay far below.
const MAX_DEPTH: usize = 256;

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<u8> {
        self.text.get(self.pos + ahead).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn offset(&self) -> usize {
        self.base + self.pos
    }

    fn unexpected(&self, expected: &'static str) -> DemangleError {
        match self.text.get(self.pos) {
            None => DemangleError::UnexpectedEnd,
            Some(&c) => DemangleError::Unexpected {
                offset: self.offset(),
                found: char::from(c),
                expected,
            },
        }
    }

    fn unsupported(&self, what: &'static str) -> DemangleError {
        DemangleError::Unsupported {
            offset: self.offset(),
            what,
        }
    }

    fn expect(&mut self, c: u8, expected: &'static str) -> Result<()> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.unexpected(expected))
        }
    }

    fn number(&mut self) -> Result<u128> {
        let start = self.pos;
        let mut value: u128 = 0;
        while let Some(c @ b'0'..=b'9') = self.peek() {
            value = value
                .checked_mul(10)
                .and_then(|v| v.checked_add(u128::from(c - b'0')))
                .ok_or(DemangleError::Overflow {
                    offset: self.base + start,
                })?;
            self.pos += 1;
        }
        if self.pos == start {
            return Err(self.unexpected("a number"));
        }
        Ok(value)
    }

    fn small_number(&mut self) -> Result<usize> {
        let at = self.offset();
        // No length or index can exceed the name's own length.
        usize::try_from(self.number()?)
            .ok()
            .filter(|&n| n <= u32::MAX as usize)
            .ok_or(DemangleError::Overflow { offset: at })
    }

    /// `<seq-id>_` in base 36, `_` alone being 0, else value + 1.
    fn seq_id(&mut self) -> Result<usize> {
        if self.eat(b'_') {
            return Ok(0);
        }
        let mut value: usize = 0;
        let start = self.offset();
        loop {
            let digit = match self.peek() {
                Some(c @ b'0'..=b'9') => usize::from(c - b'0'),
                Some(c @ b'A'..=b'Z') => usize::from(c - b'A') + 10,
                Some(b'_') => break,
                _ => return Err(self.unexpected("a sequence number")),
            };
            value = value
                .checked_mul(36)
                .and_then(|v| v.checked_add(digit))
                .ok_or(DemangleError::Overflow { offset: start })?;
            self.pos += 1;
        }
        self.pos += 1;
        value
            .checked_add(1)
            .ok_or(DemangleError::Overflow { offset: start })
    }

    fn add(&mut self, sub: Sub) {
        self.subs.push(sub);
    }

    // <encoding> ::= <name> <bare-function-type>
    fn encoding(&mut self) -> Result<Signature> {
        let (name, is_template) = self.function_name()?;
        let mut parts = name.parts;
        let own = parts.pop().ok_or(DemangleError::UnexpectedEnd)?;
        let mut namespace = Vec::with_capacity(parts.len());
        for part in parts {
            if part.template_args.is_some() {
                return Err(self.unsupported("member functions of class templates"));
            }
            namespace.push(part.name);
        }
        if let Some(args) = &own.template_args {
            self.function_args = args.clone();
        }
        let return_type = if is_template {
            let ret = self.ty()?;
            Some(self.known(ret).ty)
        } else {
            None
        };
        let mut params = Vec::new();
        if self.peek() == Some(b'v') && self.pos + 1 == self.text.len() {
            self.pos += 1;
        } else {
            if self.pos == self.text.len() {
                return Err(DemangleError::UnexpectedEnd);
            }
            while self.pos < self.text.len() {
                self.param(&mut params)?;
            }
        }
        Ok(Signature {
            namespace,
            name: own.name,
            template_args: own.template_args,
            return_type,
            params,
        })
    }

    /// A type whose parts are all known, else `Unknown` as a whole.
    fn known(&self, qual: Qual) -> Qual {
        if qual.ty.is_known() {
            qual
        } else {
            Qual::UNKNOWN
        }
    }

    /// One parameter, or the several a pack expansion (`Dp`) stands for.
    fn param(&mut self, params: &mut Vec<CType>) -> Result<()> {
        if !(self.peek() == Some(b'D') && self.peek_at(1) == Some(b'p')) || self.expansion.is_some()
        {
            // A top-level qualifier is no part of a parameter's type.
            let ty = self.ty()?;
            params.push(self.known(ty).ty);
            return Ok(());
        }
        self.pos += 2;
        let start = self.pos;
        let subs_start = self.subs.len();
        // Count: read the pattern once to learn the pack's length and where
        // the pattern ends.
        self.expansion = Some(None);
        self.pack_len = None;
        let counted = self.ty();
        let end = self.pos;
        let pack_len = self.pack_len;
        let count_result = counted.map(|_| ());
        self.subs.truncate(subs_start);
        let mut outcome = count_result;
        if outcome.is_ok() {
            match pack_len {
                Some(len) => {
                    for i in 0..len {
                        self.pos = start;
                        self.expansion = Some(Some(i));
                        match self.ty() {
                            Ok(ty) => params.push(self.known(ty).ty),
                            Err(e) => {
                                outcome = Err(e);
                                break;
                            }
                        }
                        self.subs.truncate(subs_start);
                    }
                }
                None => params.push(CType::Unknown),
            }
        }
        self.expansion = None;
        self.pos = end;
        self.unreliable_from.get_or_insert(subs_start);
        outcome
    }

    // <name> for a function: the name and whether it is a template.
    fn function_name(&mut self) -> Result<(Name, bool)> {
        match self.peek() {
            Some(b'N') => {
                self.pos += 1;
                let name = self.nested_name()?;
                let is_template = name.parts.last().is_some_and(|p| p.template_args.is_some());
                Ok((name, is_template))
            }
            Some(b'Z') => Err(self.unsupported("local names")),
            Some(b'S') if self.peek_at(1) != Some(b't') => {
                let sub = self.substitution()?;
                if self.peek() != Some(b'I') {
                    return Err(self.unexpected("template arguments after a substituted name"));
                }
                let mut name = self.sub_as_name(sub)?;
                let args = self.template_args()?;
                Self::attach_args(&mut name, args)?;
                Ok((name, true))
            }
            _ => {
                let mut name = self.unscoped_name()?;
                if self.peek() == Some(b'I') {
                    self.add(Sub::Name(name.clone()));
                    let args = self.template_args()?;
                    Self::attach_args(&mut name, args)?;
                    Ok((name, true))
                } else {
                    Ok((name, false))
                }
            }
        }
    }

    fn attach_args(name: &mut Name, args: Vec<TemplateArg>) -> Result<()> {
        let last = name.parts.last_mut().ok_or(DemangleError::UnexpectedEnd)?;
        if last.template_args.is_some() {
            name.unknown = true;
        }
        last.template_args = Some(args);
        Ok(())
    }

    // <unscoped-name> ::= <unqualified-name> | St <unqualified-name>
    fn unscoped_name(&mut self) -> Result<Name> {
        let mut parts = Vec::new();
        if self.peek() == Some(b'S') && self.peek_at(1) == Some(b't') {
            self.pos += 2;
            parts.push(NameComponent::plain("std"));
        }
        let (component, unknown) = self.unqualified_name()?;
        parts.push(component);
        Ok(Name { parts, unknown })
    }

    // <unqualified-name> ::= [L] <source-name> [<abi-tags>]
    fn unqualified_name(&mut self) -> Result<(NameComponent, bool)> {
        self.eat(b'L');
        match self.peek() {
            Some(b'0'..=b'9') => {}
            Some(b'C' | b'D') => return Err(self.unsupported("constructors and destructors")),
            Some(b'U') => return Err(self.unsupported("unnamed types and lambdas")),
            Some(b'a'..=b'z') => return Err(self.unsupported("operator names")),
            _ => return Err(self.unexpected("a name")),
        }
        let len = self.small_number()?;
        let end = self.pos + len;
        let bytes = self
            .text
            .get(self.pos..end)
            .ok_or(DemangleError::UnexpectedEnd)?;
        let text = std::str::from_utf8(bytes).map_err(|_| self.unexpected("a name"))?;
        let name = if text.starts_with("_GLOBAL__N") {
            "(anonymous namespace)".to_owned()
        } else {
            text.to_owned()
        };
        self.pos = end;
        // ABI tags (`B2v1`) are followed but not modelled.
        let mut unknown = false;
        while self.eat(b'B') {
            let len = self.small_number()?;
            if self.text.len() < self.pos + len {
                return Err(DemangleError::UnexpectedEnd);
            }
            self.pos += len;
            unknown = true;
        }
        Ok((NameComponent::plain(name), unknown))
    }

    // <nested-name> ::= N [<CV-qualifiers>] <prefix> <unqualified-name> E
    // The whole name is not added as a candidate here: the type rule adds it.
    fn nested_name(&mut self) -> Result<Name> {
        if matches!(self.peek(), Some(b'r' | b'V' | b'K' | b'R' | b'O')) {
            return Err(self.unsupported("member functions"));
        }
        let mut name = Name {
            parts: Vec::new(),
            unknown: false,
        };
        // Whether the prefix so far is a substitution (not a new candidate).
        let mut substituted = false;
        loop {
            match self.peek() {
                None => return Err(DemangleError::UnexpectedEnd),
                Some(b'E') => {
                    self.pos += 1;
                    if name.parts.is_empty() {
                        return Err(self.unexpected("a name"));
                    }
                    return Ok(name);
                }
                Some(b'S') if self.peek_at(1) == Some(b't') && name.parts.is_empty() => {
                    self.pos += 2;
                    name.parts.push(NameComponent::plain("std"));
                    continue;
                }
                Some(b'S') if name.parts.is_empty() => {
                    let sub = self.substitution()?;
                    name = self.sub_as_name(sub)?;
                    substituted = true;
                    continue;
                }
                Some(b'I') if !name.parts.is_empty() => {
                    // The template prefix is a candidate, then the arguments.
                    if !substituted {
                        self.add(Sub::Name(name.clone()));
                    }
                    let args = self.template_args()?;
                    Self::attach_args(&mut name, args)?;
                }
                Some(b'T' | b'D') => {
                    return Err(self.unsupported("template parameters and decltype in scopes"))
                }
                Some(_) => {
                    let (component, unknown) = self.unqualified_name()?;
                    name.parts.push(component);
                    name.unknown |= unknown;
                }
            }
            substituted = false;
            // Every prefix short of the whole name is a candidate; before
            // template arguments the template prefix is added above.
            if !matches!(self.peek(), Some(b'E' | b'I')) {
                self.add(Sub::Name(name.clone()));
            }
        }
    }

    /// A substitution used as a scope or template name.
    fn sub_as_name(&self, sub: Sub) -> Result<Name> {
        match sub {
            Sub::Name(name) => Ok(name),
            Sub::Type(Qual { ty, quals }) if quals.is_empty() => Ok(match ty {
                CType::Named(named) => Name {
                    parts: named.path,
                    unknown: false,
                },
                CType::Half
                | CType::Bfloat16
                | CType::Fp8E4M3
                | CType::Fp8E5M2
                | CType::Vector(_) => Name {
                    parts: vec![NameComponent::plain(ty.to_string())],
                    unknown: false,
                },
                _ => Name {
                    parts: vec![NameComponent::plain("?")],
                    unknown: true,
                },
            }),
            Sub::Type(_) | Sub::Unknown => Ok(Name {
                parts: vec![NameComponent::plain("?")],
                unknown: true,
            }),
        }
    }

    // <substitution> ::= S_ | S <seq-id> _ | St | Sa | Sb | Ss | Si | So | Sd
    fn substitution(&mut self) -> Result<Sub> {
        let at = self.offset();
        self.expect(b'S', "a substitution")?;
        let std = |name: &str| NameComponent::plain(name);
        let char_args = |extra: &[&str]| {
            let mut args = vec![TemplateArg::Type {
                ty: CType::Char,
                quals: Qualifiers::NONE,
            }];
            for class in extra {
                args.push(TemplateArg::Type {
                    ty: CType::Named(NamedType {
                        path: vec![
                            std("std"),
                            NameComponent {
                                name: (*class).to_owned(),
                                template_args: Some(vec![TemplateArg::Type {
                                    ty: CType::Char,
                                    quals: Qualifiers::NONE,
                                }]),
                            },
                        ],
                    }),
                    quals: Qualifiers::NONE,
                });
            }
            args
        };
        let class = |name: &str, args: Vec<TemplateArg>| {
            Sub::Type(Qual::plain(CType::Named(NamedType {
                path: vec![
                    std("std"),
                    NameComponent {
                        name: name.to_owned(),
                        template_args: Some(args),
                    },
                ],
            })))
        };
        let template = |name: &str| {
            Sub::Name(Name {
                parts: vec![std("std"), std(name)],
                unknown: false,
            })
        };
        let abbreviation = match self.peek() {
            Some(b'a') => Some(template("allocator")),
            Some(b'b') => Some(template("basic_string")),
            Some(b's') => Some(class(
                "basic_string",
                char_args(&["char_traits", "allocator"]),
            )),
            Some(b'i') => Some(class("basic_istream", char_args(&["char_traits"]))),
            Some(b'o') => Some(class("basic_ostream", char_args(&["char_traits"]))),
            Some(b'd') => Some(class("basic_iostream", char_args(&["char_traits"]))),
            _ => None,
        };
        if let Some(sub) = abbreviation {
            self.pos += 1;
            return Ok(sub);
        }
        let index = self.seq_id()?;
        if self.unreliable_from.is_some_and(|from| index >= from) {
            return Ok(Sub::Unknown);
        }
        self.subs
            .get(index)
            .cloned()
            .ok_or(DemangleError::BadReference { offset: at })
    }

    // <template-param> ::= T_ | T <number> _
    fn template_param(&mut self) -> Result<TemplateArg> {
        let at = self.offset();
        self.expect(b'T', "a template parameter")?;
        let index = if self.eat(b'_') {
            0
        } else {
            let n = self.small_number()?;
            self.expect(b'_', "'_'")?;
            n + 1
        };
        let arg = self
            .function_args
            .get(index)
            .cloned()
            .ok_or(DemangleError::BadReference { offset: at })?;
        Ok(match arg {
            TemplateArg::Pack(elements) => match self.expansion {
                Some(Some(i)) => elements.get(i).cloned().unwrap_or(TemplateArg::Unknown),
                Some(None) => {
                    self.pack_len = Some(elements.len());
                    TemplateArg::Unknown
                }
                None => TemplateArg::Unknown,
            },
            other => other,
        })
    }

    // <template-args> ::= I <template-arg>+ E
    fn template_args(&mut self) -> Result<Vec<TemplateArg>> {
        self.expect(b'I', "template arguments")?;
        let mut args = Vec::new();
        while !self.eat(b'E') {
            args.push(self.template_arg()?);
        }
        Ok(args)
    }

    fn template_arg(&mut self) -> Result<TemplateArg> {
        match self.peek() {
            Some(b'L') => self.literal(),
            Some(b'J') => {
                self.pos += 1;
                let mut args = Vec::new();
                while !self.eat(b'E') {
                    args.push(self.template_arg()?);
                }
                Ok(TemplateArg::Pack(args))
            }
            Some(b'X') => {
                self.pos += 1;
                if self.peek() != Some(b'T') {
                    return Err(self.unsupported("expressions in template arguments"));
                }
                let arg = self.template_param()?;
                self.expect(b'E', "the end of an expression")?;
                Ok(arg)
            }
            _ => {
                let qual = self.ty()?;
                Ok(if qual.ty.is_known() {
                    TemplateArg::Type {
                        ty: qual.ty,
                        quals: qual.quals,
                    }
                } else {
                    TemplateArg::Unknown
                })
            }
        }
    }

    // <expr-primary> ::= L <type> <value number> E | L <mangled-name> E
    fn literal(&mut self) -> Result<TemplateArg> {
        self.expect(b'L', "a literal")?;
        if self.peek() == Some(b'_') {
            return Err(self.unsupported("addresses as template arguments"));
        }
        let ty = self.ty()?.ty;
        let integral = matches!(
            ty,
            CType::Bool
                | CType::Char
                | CType::SignedChar
                | CType::UnsignedChar
                | CType::Short
                | CType::UnsignedShort
                | CType::Int
                | CType::UnsignedInt
                | CType::Long
                | CType::UnsignedLong
                | CType::LongLong
                | CType::UnsignedLongLong
                | CType::Int128
                | CType::UnsignedInt128
                | CType::WChar
                | CType::Char8
                | CType::Char16
                | CType::Char32
                | CType::Named(_)
        );
        if !integral {
            // Floating-point (hex) and nullptr literals: followed, not read.
            while let Some(c) = self.peek() {
                if c == b'E' {
                    break;
                }
                if !c.is_ascii_alphanumeric() {
                    return Err(self.unexpected("a literal's value"));
                }
                self.pos += 1;
            }
            self.expect(b'E', "the end of a literal")?;
            return Ok(TemplateArg::Unknown);
        }
        let at = self.offset();
        let negative = self.eat(b'n');
        let magnitude =
            i128::try_from(self.number()?).map_err(|_| DemangleError::Overflow { offset: at })?;
        self.expect(b'E', "the end of a literal")?;
        Ok(TemplateArg::Integer {
            ty,
            value: if negative { -magnitude } else { magnitude },
        })
    }

    // <type>, with the candidates it adds.
    fn ty(&mut self) -> Result<Qual> {
        if self.depth >= MAX_DEPTH {
            return Err(self.unsupported("types nested this deeply"));
        }
        self.depth += 1;
        let result = self.ty_inner();
        self.depth -= 1;
        result
    }

    fn ty_inner(&mut self) -> Result<Qual> {
        let c = self.peek().ok_or(DemangleError::UnexpectedEnd)?;
        if let Some(ty) = builtin(c) {
            self.pos += 1;
            return Ok(Qual::plain(ty));
        }
        let qual = match c {
            b'r' | b'V' | b'K' => {
                let mut quals = Qualifiers::NONE;
                quals.is_restrict = self.eat(b'r');
                quals.is_volatile = self.eat(b'V');
                quals.is_const = self.eat(b'K');
                let inner = self.ty()?;
                Qual {
                    ty: inner.ty,
                    quals: inner.quals.union(quals),
                }
            }
            b'P' => {
                self.pos += 1;
                let inner = self.ty()?;
                Qual::plain(CType::pointer_to(inner.ty, inner.quals))
            }
            b'R' | b'O' => {
                self.pos += 1;
                let inner = self.ty()?;
                let ty = if !inner.ty.is_known() {
                    CType::Unknown
                } else if c == b'R' {
                    CType::Reference {
                        referee: Box::new(inner.ty),
                        quals: inner.quals,
                    }
                } else {
                    CType::RvalueReference {
                        referee: Box::new(inner.ty),
                        quals: inner.quals,
                    }
                };
                Qual::plain(ty)
            }
            b'C' | b'G' => {
                // Complex and imaginary types.
                self.pos += 1;
                self.ty()?;
                Qual::UNKNOWN
            }
            b'F' => {
                self.pos += 1;
                self.eat(b'Y');
                while !self.eat(b'E') {
                    if matches!(self.peek(), Some(b'R' | b'O')) && self.peek_at(1) == Some(b'E') {
                        self.pos += 1;
                        continue;
                    }
                    self.ty()?;
                }
                Qual::UNKNOWN
            }
            b'A' => {
                self.pos += 1;
                if self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.number()?;
                } else if self.peek() != Some(b'_') {
                    return Err(self.unsupported("arrays of dependent size"));
                }
                self.expect(b'_', "'_' after an array's size")?;
                self.ty()?;
                Qual::UNKNOWN
            }
            b'M' => {
                self.pos += 1;
                self.ty()?;
                self.ty()?;
                Qual::UNKNOWN
            }
            b'u' => {
                self.pos += 1;
                self.unqualified_name()?;
                Qual::UNKNOWN
            }
            b'T' => {
                let arg = self.template_param()?;
                let qual = match arg {
                    TemplateArg::Type { ty, quals } => Qual { ty, quals },
                    TemplateArg::Unknown => Qual::UNKNOWN,
                    _ => return Err(self.unexpected("a type parameter")),
                };
                if self.peek() == Some(b'I') {
                    // A template template parameter with its arguments.
                    self.add(Sub::Type(qual));
                    self.template_args()?;
                    Qual::UNKNOWN
                } else {
                    qual
                }
            }
            b'D' => return self.d_type(),
            b'S' if self.peek_at(1) != Some(b't') => {
                let sub = self.substitution()?;
                if self.peek() != Some(b'I') {
                    // A substitution is not a new candidate.
                    return Ok(match sub {
                        Sub::Type(qual) => qual,
                        Sub::Name(name) => Qual::plain(name.into_type()),
                        Sub::Unknown => Qual::UNKNOWN,
                    });
                }
                let mut name = self.sub_as_name(sub)?;
                let args = self.template_args()?;
                Self::attach_args(&mut name, args)?;
                Qual::plain(name.into_type())
            }
            b'N' => {
                self.pos += 1;
                Qual::plain(self.nested_name()?.into_type())
            }
            b'Z' => return Err(self.unsupported("local names")),
            _ => {
                let mut name = self.unscoped_name()?;
                if self.peek() == Some(b'I') {
                    self.add(Sub::Name(name.clone()));
                    let args = self.template_args()?;
                    Self::attach_args(&mut name, args)?;
                }
                Qual::plain(name.into_type())
            }
        };
        let qual = self.known(qual);
        self.add(Sub::Type(qual.clone()));
        Ok(qual)
    }

    /// The `D` types: builtins, pack expansions, vendor vectors.
    fn d_type(&mut self) -> Result<Qual> {
        let ty = match self.peek_at(1) {
            Some(b'n') => CType::NullPtr,
            Some(b'i') => CType::Char32,
            Some(b's') => CType::Char16,
            Some(b'u') => CType::Char8,
            Some(b'a' | b'c' | b'd' | b'e' | b'f' | b'h') => CType::Unknown,
            Some(b'F') => {
                // _FloatN: DF <number> _ (or b for the bfloat16 form).
                self.pos += 2;
                self.number()?;
                if !self.eat(b'b') {
                    self.expect(b'_', "'_' after a _Float width")?;
                }
                return Ok(Qual::UNKNOWN);
            }
            Some(b'p') => {
                // A pack expansion inside a type: followed, not expanded.
                self.pos += 2;
                self.ty()?;
                self.add(Sub::Unknown);
                return Ok(Qual::UNKNOWN);
            }
            Some(b'v') => {
                self.pos += 2;
                if self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.number()?;
                } else {
                    return Err(self.unsupported("vector types of dependent size"));
                }
                self.expect(b'_', "'_' after a vector's size")?;
                self.ty()?;
                self.add(Sub::Unknown);
                return Ok(Qual::UNKNOWN);
            }
            _ => return Err(self.unsupported("decltype and other D types")),
        };
        self.pos += 2;
        Ok(Qual::plain(ty))
    }
}

/// The one-letter builtin type codes.
fn builtin(c: u8) -> Option<CType> {
    Some(match c {
        b'v' => CType::Void,
        b'w' => CType::WChar,
        b'b' => CType::Bool,
        b'c' => CType::Char,
        b'a' => CType::SignedChar,
        b'h' => CType::UnsignedChar,
        b's' => CType::Short,
        b't' => CType::UnsignedShort,
        b'i' => CType::Int,
        b'j' => CType::UnsignedInt,
        b'l' => CType::Long,
        b'm' => CType::UnsignedLong,
        b'x' => CType::LongLong,
        b'y' => CType::UnsignedLongLong,
        b'n' => CType::Int128,
        b'o' => CType::UnsignedInt128,
        b'f' => CType::Float,
        b'd' => CType::Double,
        b'e' => CType::LongDouble,
        // __float128 and `...`: no kernel parameter has them.
        b'g' | b'z' => CType::Unknown,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `mangled<TAB>c++filt's text[<TAB>unsupported]`, from gen-mangled.sh.
    const TABLE: &str = include_str!("mangled.tsv");

    /// `c++filt` prints the qualifiers of a substituted qualified type in the
    /// order they were applied (`float volatile const*` for `PKT_` with
    /// `T_ = volatile float`); the model keeps qualifiers as a set and prints
    /// one order.
    fn canonical_quals(text: &str) -> String {
        text.replace("volatile const", "const volatile")
    }

    #[test]
    fn table_matches_cxxfilt() {
        let mut supported = 0;
        let mut unsupported = 0;
        let mut failures = Vec::new();
        for line in TABLE.lines().filter(|l| !l.trim().is_empty()) {
            let fields: Vec<&str> = line.split('\t').collect();
            let (mangled, want) = (fields[0], fields[1]);
            let marked = fields.get(2) == Some(&"unsupported");
            let got = demangle(mangled);
            if marked {
                unsupported += 1;
                // Never a wrong answer: an error, or Unknown parameters.
                if let Ok(sig) = &got {
                    if sig.is_fully_known() {
                        failures.push(format!("{mangled}: unsupported, but read as {sig:#}"));
                    }
                }
            } else {
                supported += 1;
                match got {
                    Ok(sig)
                        if sig.is_fully_known() && format!("{sig:#}") == canonical_quals(want) => {}
                    Ok(sig) => failures.push(format!("{mangled}:\n  got  {sig:#}\n  want {want}")),
                    Err(e) => failures.push(format!("{mangled}: {e}")),
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        assert!(supported >= 120, "{supported} supported lines");
        assert!(unsupported <= 8, "{unsupported} unsupported lines");
    }

    #[test]
    fn saxpy_from_the_issue() {
        let sig = demangle("_Z5saxpyIfEvT_PKS0_PS0_i").unwrap();
        assert_eq!(sig.name, "saxpy");
        assert!(sig.namespace.is_empty());
        assert_eq!(sig.return_type, Some(CType::Void));
        assert_eq!(
            sig.params,
            vec![
                CType::Float,
                CType::pointer_to(CType::Float, Qualifiers::CONST),
                CType::pointer_to(CType::Float, Qualifiers::NONE),
                CType::Int,
            ]
        );
        assert_eq!(
            sig.to_string(),
            "void saxpy<float>(float, const float*, float*, int)"
        );
        assert_eq!(
            format!("{sig:#}"),
            "void saxpy<float>(float, float const*, float*, int)"
        );
    }

    #[test]
    fn names_and_namespaces() {
        let sig = demangle("_ZN3app6detail5boxedIfEEvNS0_3BoxIT_EEPS4_PKS3_S3_").unwrap();
        assert_eq!(sig.namespace, ["app", "detail"]);
        assert_eq!(sig.name, "boxed");
        assert_eq!(sig.qualified_name(), "app::detail::boxed");
        let sig = demangle("_ZN12_GLOBAL__N_14anonEPfi").unwrap();
        assert_eq!(sig.namespace, ["(anonymous namespace)"]);
        let sig = demangle("_ZL10internal_kPfi").unwrap();
        assert_eq!(sig.name, "internal_k");
        assert_eq!(
            demangle("_Z1k6float4").unwrap().params[0]
                .layout()
                .map(|l| l.size),
            Some(16)
        );
        assert_eq!(demangle("_Z1k6__half").unwrap().params, [CType::Half]);
        assert_eq!(
            demangle("_Z1kP13__nv_fp8_e4m3").unwrap().params,
            [CType::Pointer {
                pointee: Box::new(CType::Fp8E4M3),
                quals: Default::default()
            }]
        );
        assert_eq!(
            demangle("_Z1k13__nv_bfloat16").unwrap().params,
            [CType::Bfloat16]
        );
    }

    #[test]
    fn unknown_parameters_stay_unknown_and_others_known() {
        let sig = demangle("_Z1kiPFvfEf").unwrap();
        assert_eq!(sig.params, [CType::Int, CType::Unknown, CType::Float]);
        let sig = demangle("_Z1kRA4_fS_").unwrap();
        assert_eq!(sig.params, [CType::Unknown, CType::Unknown]);
        let sig = demangle("_Z1kP6TaggedB2v1i").unwrap();
        assert_eq!(sig.params, [CType::Unknown, CType::Int]);
        // A substitution past a pack expansion is not guessed (c++filt
        // reads S2_ as int here).
        let sig = demangle("_Z5pack2IfJiiEEvPT_DpT0_S2_").unwrap();
        assert_eq!(
            sig.params,
            [
                CType::pointer_to(CType::Float, Qualifiers::NONE),
                CType::Int,
                CType::Int,
                CType::Unknown
            ]
        );
        // Substitutions before the expansion still resolve.
        let sig = demangle("_Z5pack2IfJiiEEvPT_DpT0_S1_").unwrap();
        assert_eq!(
            sig.params[3],
            CType::pointer_to(CType::Float, Qualifiers::NONE)
        );
    }

    #[test]
    fn errors() {
        assert_eq!(demangle("saxpy"), Err(DemangleError::NotMangled));
        assert_eq!(demangle("_Z"), Err(DemangleError::UnexpectedEnd));
        assert_eq!(demangle("_Z5saxpy"), Err(DemangleError::UnexpectedEnd));
        assert_eq!(demangle("_Z9saxpyf"), Err(DemangleError::UnexpectedEnd));
        assert!(matches!(
            demangle("_Z3fooS3_"),
            Err(DemangleError::BadReference { .. })
        ));
        assert!(matches!(
            demangle("_Z3fooT_"),
            Err(DemangleError::BadReference { .. })
        ));
        assert!(matches!(
            demangle("_Z3foo!"),
            Err(DemangleError::Unexpected { found: '!', .. })
        ));
        assert!(matches!(
            demangle("_Z3foov.part.0"),
            Err(DemangleError::Unexpected { .. })
        ));
        assert!(matches!(
            demangle("_ZN3FooC1Ev"),
            Err(DemangleError::Unsupported { .. })
        ));
        assert!(matches!(
            demangle("_ZNK3Foo3barEv"),
            Err(DemangleError::Unsupported { .. })
        ));
        assert!(demangle("_Z4mainIZ1fvEUliE_Evv").is_err());
        assert!(matches!(
            demangle("_Z3fooILi99999999999999999999999999999999999999999EEvv"),
            Err(DemangleError::Overflow { .. })
        ));
        assert_eq!(
            demangle("_Z3fooS3_").unwrap_err().to_string(),
            "mangled name: the reference at byte 6 refers to nothing"
        );
    }

    #[test]
    fn damaged_names_never_panic() {
        // Every prefix, and every one-byte change, of every table name.
        let alphabet = b"_0123456789SEIJLNPRKVTXDpvifdZ";
        for line in TABLE.lines() {
            let mangled = line.split('\t').next().unwrap_or("");
            for end in 0..mangled.len() {
                let _ = demangle(&mangled[..end]);
            }
            for at in 2..mangled.len() {
                for &c in alphabet {
                    let mut bytes = mangled.as_bytes().to_vec();
                    bytes[at] = c;
                    let _ = demangle(std::str::from_utf8(&bytes).unwrap());
                }
            }
        }
        let deep = format!("_Z1k{}f", "P".repeat(100_000));
        assert!(matches!(
            demangle(&deep),
            Err(DemangleError::Unsupported { .. })
        ));
        assert!(demangle("_Z1k4\u{e9}").is_err());
    }

    #[test]
    fn literals_print_like_cxxfilt() {
        let sig =
            demangle("_Z3fooIiLi3ELj4ELl5ELm6ELb1ELc65ELx7ELy8ELin3ELs2ELh9ELa1EEvv").unwrap();
        assert_eq!(
            format!("{sig:#}"),
            "void foo<int, 3, 4u, 5l, 6ul, true, (char)65, 7ll, 8ull, -3, (short)2, (unsigned char)9, (signed char)1>()"
        );
        let sig = demangle("_Z3fooIL4Mode1EEvv").unwrap();
        assert_eq!(format!("{sig:#}"), "void foo<(Mode)1>()");
    }
}
