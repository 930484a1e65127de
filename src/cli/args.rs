//! A small, strict `--flag value` parser (no external dependency).

use crate::core::base::CalcError;
use std::collections::BTreeMap;
use std::fmt::Display;
use thiserror::Error;

/// A CLI failure: one sentence for stderr, exit status 2.
#[derive(Debug, Error)]
pub enum CliError {
    /// Bad command-line usage.
    #[error("{0}")]
    Usage(String),
    /// A file could not be read.
    #[error("cannot read {path}: {reason}")]
    Io {
        /// The path given.
        path: String,
        /// The OS reason.
        reason: String,
    },
    /// Writing the output failed (stdout closed or full).
    #[error("cannot write to {path}: {reason}")]
    Write {
        /// Where the output went.
        path: String,
        /// The OS reason.
        reason: String,
    },
    /// The core rejected the input.
    #[error("{0}")]
    Calc(#[from] CalcError),
    /// Fetching from the Hugging Face Hub failed (`model --hf`).
    #[error("{0}")]
    Hub(#[from] crate::core::model::HubError),
}

/// User input as quoted in messages: its first 40 characters (the core's one rule).
pub(crate) use crate::core::base::shorten as short;

/// A failure writing to stdout as a `CliError`.
pub(crate) fn stdout_error(e: impl Display) -> CliError {
    CliError::Write {
        path: "stdout".into(),
        reason: e.to_string(),
    }
}

/// A value that cannot be turned into JSON, as a `CliError`.
pub(crate) fn json_error(e: serde_json::Error) -> CliError {
    CliError::Usage(e.to_string())
}

/// Parsed `--key value` options; `--json` and other bare switches map to "true".
/// Repeated options (e.g. `--gpu a --gpu b`) keep every value in order.
#[derive(Debug, Default, Clone)]
pub struct Args {
    values: BTreeMap<String, Vec<String>>,
    /// Every key a command asked for (`flags::check_declared` holds it against the command's
    /// declared flags in debug builds, so a flag read but not declared fails the tests).
    read: std::cell::RefCell<std::collections::BTreeSet<String>>,
}

/// Switches that take no value.
const SWITCHES: &[&str] = &[
    "json",
    "help",
    "accuracy",
    "tp-sweep",
    "largest",
    "include-mtp",
    "fit",
    "simulate",
    "enable-expert-parallel",
    "no-async-scheduling",
];

impl Args {
    /// Parses `--key value`, `--key=value` and bare switches.
    pub fn parse(args: &[String]) -> Result<Args, CliError> {
        let mut a = Args::default();
        let mut i = 0;
        while i < args.len() {
            let raw = &args[i];
            let Some(name) = raw.strip_prefix("--") else {
                return Err(CliError::Usage(format!(
                    "unexpected argument \"{}\"; options start with --",
                    short(raw)
                )));
            };
            if let Some((k, v)) = name.split_once('=') {
                a.values
                    .entry(k.to_string())
                    .or_default()
                    .push(v.to_string());
            } else if SWITCHES.contains(&name) {
                a.values
                    .entry(name.to_string())
                    .or_default()
                    .push("true".into());
            } else {
                let Some(v) = args.get(i + 1) else {
                    return Err(CliError::Usage(format!("--{name} needs a value")));
                };
                a.values
                    .entry(name.to_string())
                    .or_default()
                    .push(v.clone());
                i += 1;
            }
            i += 1;
        }
        Ok(a)
    }

    /// Whether a switch is present.
    pub fn flag(&self, k: &str) -> bool {
        self.note(k);
        self.values.contains_key(k)
    }

    /// The last value of an option.
    pub fn get(&self, k: &str) -> Option<&str> {
        self.note(k);
        self.values
            .get(k)
            .and_then(|v| v.last())
            .map(String::as_str)
    }

    /// Every value of a repeatable option.
    pub fn all(&self, k: &str) -> Vec<&str> {
        self.note(k);
        self.values
            .get(k)
            .map(|v| v.iter().map(String::as_str).collect())
            .unwrap_or_default()
    }

    /// Notes that the command asked for `k`.
    fn note(&self, k: &str) {
        if cfg!(debug_assertions) {
            self.read.borrow_mut().insert(k.to_string());
        }
    }

    /// The keys the command asked for (debug builds; empty in release).
    pub(super) fn keys_read(&self) -> Vec<String> {
        self.read.borrow().iter().cloned().collect()
    }

    /// A required option.
    pub fn require(&self, k: &str) -> Result<&str, CliError> {
        self.get(k)
            .ok_or_else(|| CliError::Usage(format!("--{k} is required")))
    }

    /// An optional positive integer (≥ 1).
    pub fn u64_opt(&self, k: &str) -> Result<Option<u64>, CliError> {
        match self.get(k) {
            None => Ok(None),
            Some(s) => match s.trim().replace('_', "").parse::<u64>() {
                Ok(v) if v >= 1 => Ok(Some(v)),
                _ => Err(CliError::Usage(format!(
                    "--{k} must be a whole number of at least 1, not \"{}\"",
                    short(s)
                ))),
            },
        }
    }

    /// An optional finite number within `[min, max]`.
    pub fn f64_opt(&self, k: &str, min: f64, max: f64) -> Result<Option<f64>, CliError> {
        match self.get(k) {
            None => Ok(None),
            Some(s) => match s.trim().parse::<f64>() {
                Ok(v) if v.is_finite() && v >= min && v <= max => Ok(Some(v)),
                _ => Err(CliError::Usage(format!(
                    "--{k} must be a number from {min} to {max}, not \"{}\"",
                    short(s)
                ))),
            },
        }
    }

    /// Reads the file named by a required option (at most 64 MiB).
    pub fn read_file(&self, k: &str) -> Result<String, CliError> {
        let path = self.require(k)?;
        let fail = |reason: String| CliError::Io {
            path: path.into(),
            reason,
        };
        let meta = std::fs::metadata(path).map_err(|e| fail(e.to_string()))?;
        if meta.len() > 64 << 20 {
            return Err(fail("file larger than 64 MiB".into()));
        }
        let bytes = std::fs::read(path).map_err(|e| fail(e.to_string()))?;
        String::from_utf8(bytes).map_err(|_| fail("not UTF-8 text".into()))
    }
}
