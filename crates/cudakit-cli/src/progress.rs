//! A one-line progress bar on stderr for long steps. It appears only when
//! stderr is a terminal and the step has already taken a second, and it
//! erases itself when the step ends, so short runs, pipes, logs and tests
//! never see it.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// How long a step runs before its bar appears.
const DELAY: Duration = Duration::from_secs(1);
/// The least time between two redraws.
const REDRAW: Duration = Duration::from_millis(100);
/// Characters of the bar itself.
const WIDTH: usize = 30;

/// The progress of one step.
#[derive(Debug)]
pub(crate) struct Progress {
    label: &'static str,
    total: u64,
    started: Instant,
    enabled: bool,
    drawn: Option<Instant>,
}

impl Progress {
    /// A step of `total` units named `label`; draws nothing yet.
    pub(crate) fn new(label: &'static str, total: u64) -> Progress {
        Progress {
            label,
            total,
            started: Instant::now(),
            enabled: std::io::stderr().is_terminal(),
            drawn: None,
        }
    }

    /// Records that `done` units are finished; redraws when due.
    pub(crate) fn set(&mut self, done: u64) {
        if !self.enabled {
            return;
        }
        let now = Instant::now();
        let elapsed = now.duration_since(self.started);
        if elapsed < DELAY {
            return;
        }
        if self
            .drawn
            .is_some_and(|last| now.duration_since(last) < REDRAW && done < self.total)
        {
            return;
        }
        self.drawn = Some(now);
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r\x1b[2K{}",
            line(self.label, done, self.total, elapsed)
        );
        let _ = err.flush();
    }

    /// Ends the step: erases the bar if one was drawn.
    pub(crate) fn finish(&mut self) {
        if self.drawn.take().is_some() {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// `label [#########.........]  45/100  3.2 s`.
fn line(label: &str, done: u64, total: u64, elapsed: Duration) -> String {
    let done = done.min(total);
    let filled = if total == 0 {
        WIDTH
    } else {
        (done as u128 * WIDTH as u128 / total as u128) as usize
    };
    format!(
        "{label} [{}{}] {done}/{total} {:.1} s",
        "#".repeat(filled),
        ".".repeat(WIDTH - filled),
        elapsed.as_secs_f64()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_fills_in_proportion() {
        let l = line("kernel", 15, 30, Duration::from_millis(3_210));
        assert_eq!(
            l,
            format!("kernel [{}{}] 15/30 3.2 s", "#".repeat(15), ".".repeat(15))
        );
        assert!(line("x", 0, 0, Duration::ZERO).contains(&"#".repeat(WIDTH)));
        assert!(line("x", 9, 3, Duration::ZERO).contains("3/3"));
    }
}
