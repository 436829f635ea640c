//! Progress of a long operator command (`migrate --all-tenants`, `seed`, `tenant move`,
//! `tenant export`/`import`): a bar on standard error when it is a terminal, plain lines
//! otherwise (logs, CI, a pipe), so a redirected run stays readable and greppable.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Plain mode prints at most one line per this interval (and always the last one).
const PLAIN_EVERY: Duration = Duration::from_secs(2);

/// One operation's progress. Cheap to share by reference across tasks.
pub struct Progress {
    label: String,
    total: u64,
    bar: Option<ProgressBar>,
    plain: Mutex<PlainState>,
}

struct PlainState {
    done: u64,
    last_line: Option<Instant>,
    message: String,
}

impl Progress {
    /// A progress of `total` steps (0 when the total is unknown), titled `label`. A bar when
    /// standard error is a terminal, plain lines otherwise.
    pub fn new(label: &str, total: u64) -> Self {
        Self::with_terminal(label, total, std::io::stderr().is_terminal())
    }

    /// As [`Progress::new`] with the choice made by the caller (tests, `--plain`).
    pub fn with_terminal(label: &str, total: u64, terminal: bool) -> Self {
        let bar = terminal.then(|| {
            let bar = if total > 0 {
                ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr())
            } else {
                ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
            };
            let template = if total > 0 {
                "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} (eta {eta}) {msg}"
            } else {
                "{prefix} [{elapsed_precise}] {spinner} {pos} {msg}"
            };
            if let Ok(style) = ProgressStyle::with_template(template) {
                bar.set_style(style);
            }
            bar.set_prefix(label.to_owned());
            bar
        });
        Self {
            label: label.to_owned(),
            total,
            bar,
            plain: Mutex::new(PlainState {
                done: 0,
                last_line: None,
                message: String::new(),
            }),
        }
    }

    /// `n` more steps done.
    pub fn inc(&self, n: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(n);
            return;
        }
        let Ok(mut plain) = self.plain.lock() else {
            return;
        };
        plain.done += n;
        let due = plain.last_line.is_none_or(|at| at.elapsed() >= PLAIN_EVERY)
            || (self.total > 0 && plain.done >= self.total);
        if due {
            plain.last_line = Some(Instant::now());
            eprintln!("{}", self.plain_line(plain.done, &plain.message));
        }
    }

    /// A short note beside the count (the current tenant, the step being done).
    pub fn set_message(&self, message: impl Into<String>) {
        let message = message.into();
        if let Some(bar) = &self.bar {
            bar.set_message(message);
        } else if let Ok(mut plain) = self.plain.lock() {
            plain.message = message;
        }
    }

    /// Ends the progress with a closing line (kept on screen under the bar).
    pub fn finish(&self, message: impl Into<String>) {
        let message = message.into();
        if let Some(bar) = &self.bar {
            bar.finish_with_message(message);
        } else {
            eprintln!("{}: {message}", self.label);
        }
    }

    fn plain_line(&self, done: u64, message: &str) -> String {
        let count = if self.total > 0 {
            format!("{done}/{}", self.total)
        } else {
            done.to_string()
        };
        if message.is_empty() {
            format!("{}: {count}", self.label)
        } else {
            format!("{}: {count} {message}", self.label)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_lines_name_the_label_the_count_and_the_message() {
        let progress = Progress::with_terminal("migrate", 4, false);
        assert_eq!(progress.plain_line(1, ""), "migrate: 1/4");
        assert_eq!(progress.plain_line(2, "t-one"), "migrate: 2/4 t-one");
        let open = Progress::with_terminal("import", 0, false);
        assert_eq!(open.plain_line(7, "rows"), "import: 7 rows");
    }

    #[test]
    fn plain_mode_counts_without_a_bar() {
        let progress = Progress::with_terminal("seed", 3, false);
        progress.inc(1);
        progress.inc(2);
        progress.finish("done");
        let done = progress.plain.lock().map(|p| p.done).unwrap_or(0);
        assert_eq!(done, 3);
        assert!(progress.bar.is_none());
    }
}
