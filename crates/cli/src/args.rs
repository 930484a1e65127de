//! The CLI's error and the small readers its commands share (a required flag, a file).

use crate::core::base::CalcError;
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

/// A flag the command needs: its value, or "--`flag` is required".
pub(crate) fn required<'a>(flag: &str, v: Option<&'a str>) -> Result<&'a str, CliError> {
    v.ok_or_else(|| CliError::Usage(format!("--{flag} is required")))
}

/// Reads the file named by a required flag (at most 64 MiB).
pub(crate) fn read_file(flag: &str, path: Option<&str>) -> Result<String, CliError> {
    let path = required(flag, path)?;
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
