//! The `llmcalc` command line: argument parsing and JSON/text output over the core.
//!
//! The flags are typed `clap` structs (`opts/`); one file per command, each exposing
//! `run(&TheCommandArgs, &mut dyn Write) -> Result<(), CliError>`.
//! Exit status: 0 with results, 2 with one sentence on stderr for any bad input. Never panics.
//! A reader that stops reading (`llmcalc … | head`) ends the output quietly, with status 0, as
//! other line-oriented tools do.

#![cfg(not(target_arch = "wasm32"))]

// The core under the name the rest of the project gives it (`crate::core::calc::Item`).
use llmcalc_core as core;

mod args;
mod calibrate;
mod eff;
mod engine_opts;
mod gpus;
mod hub_fetch;
mod load_cmd;
mod model;
pub mod opts;
mod perf;
mod plan_cmd;
mod plan_search;
mod simulate;
mod vllm;

pub use args::CliError;

use crate::core::sim::{DEFAULT_FRONTEND_OVERHEAD_MS, DEFAULT_FRONTEND_PER_TOKEN_US};
use args::{json_error, stdout_error};
use opts::{Cmd, Parsed};
use serde::Serialize;
use std::io::Write;

/// The commands and a one-line description of each (the usage and the unknown-command sentence
/// list these).
pub const COMMANDS: &[(&str, &str)] = &[
    (
        "model",
        "parameters, weight bytes, KV cache of one sequence, state bytes and the ledger",
    ),
    (
        "vllm",
        "vLLM's KV-cache budget: available GiB, GPU KV cache tokens, blocks, max concurrency",
    ),
    ("gpus", "the accelerator catalog"),
    (
        "perf",
        "TTFT, time per output token, throughput and end-to-end latency",
    ),
    ("plan", "GPUs and replicas for a request rate and its peak"),
    ("load", "model load time from storage to GPU memory"),
    (
        "simulate",
        "one vLLM replica under load: TTFT, TPOT, ITL, E2EL percentiles, throughput, saturation",
    ),
    (
        "calibrate",
        "a vllm bench serve result beside the simulator's prediction for the same setup \
         (--fit: also fit the efficiencies to it and print the link parameters)",
    ),
    (
        "completions",
        "a completion script for a shell: bash, zsh, fish, powershell or elvish",
    ),
];

/// Runs the CLI with `args` (without the program name); returns the exit status.
pub fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let Some((cmd, rest)) = args.split_first() else {
        let _ = writeln!(err, "{}", usage());
        return 2;
    };
    if cmd == "--help" || cmd == "-h" || cmd == "help" {
        let _ = writeln!(out, "{}", usage());
        return 0;
    }
    if cmd == "--version" || cmd == "-V" {
        let _ = writeln!(out, "llmcalc {}", env!("CARGO_PKG_VERSION"));
        return 0;
    }
    let mut out = Watched {
        inner: out,
        closed: false,
    };
    let result = opts::parse(cmd, rest).and_then(|parsed| match parsed {
        Parsed::Print(text) => write_text(&mut out, &text).map_err(|e| e.to_string()),
        Parsed::Run(c) => dispatch(*c, &mut out).map_err(|e| e.to_string()),
    });
    match result {
        Ok(()) => 0,
        Err(_) if out.closed => 0,
        Err(e) => {
            let _ = writeln!(err, "llmcalc {cmd}: {e}");
            2
        }
    }
}

/// The output, noting whether its reader has gone (a broken pipe).
struct Watched<'w> {
    inner: &'w mut dyn Write,
    closed: bool,
}

impl Write for Watched<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.inner.write(buf).inspect_err(|e| self.note(e))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush().inspect_err(|e| self.note(e))
    }
}

impl Watched<'_> {
    fn note(&mut self, e: &std::io::Error) {
        self.closed |= e.kind() == std::io::ErrorKind::BrokenPipe;
    }
}

/// Runs a parsed command: each command's handler, in its own file, with its typed flags.
fn dispatch(cmd: Cmd, out: &mut dyn Write) -> Result<(), CliError> {
    match cmd {
        Cmd::Gpus(a) => gpus::run(&a, out),
        Cmd::Model(a) => model::run(&a, out),
        Cmd::Perf(a) => perf::run(&a, out),
        Cmd::Plan(a) => plan_cmd::run(&a, out),
        Cmd::Load(a) => load_cmd::run(&a, out),
        Cmd::Vllm(a) => vllm::run(&a, out),
        Cmd::Simulate(a) => simulate::run(&a, out),
        Cmd::Calibrate(a) => calibrate::run(&a, out),
        Cmd::Completions(a) => {
            let mut buf = Vec::new();
            clap_complete::generate(a.shell, &mut opts::command(), "llmcalc", &mut buf);
            out.write_all(&buf).map_err(stdout_error)
        }
    }
}

/// Writes a value as pretty JSON followed by a newline.
pub fn write_json(out: &mut dyn Write, v: &serde_json::Value) -> Result<(), CliError> {
    let s = serde_json::to_string_pretty(v).map_err(json_error)?;
    writeln!(out, "{s}").map_err(stdout_error)
}

/// Writes any serializable value as pretty JSON (through a `serde_json::Value`, so with
/// the same key order as `write_json`).
fn write_serialized<T: Serialize>(out: &mut dyn Write, v: &T) -> Result<(), CliError> {
    let v = serde_json::to_value(v).map_err(json_error)?;
    write_json(out, &v)
}

/// Writes text to stdout as it is.
fn write_text(out: &mut dyn Write, text: &str) -> Result<(), CliError> {
    out.write_all(text.as_bytes()).map_err(stdout_error)
}

/// The usage text.
pub fn usage() -> String {
    let mut s = String::from("usage: llmcalc <command> [options] [--json]\n\ncommands:\n");
    let width = COMMANDS.iter().map(|(c, _)| c.len()).max().unwrap_or(0);
    for (c, d) in COMMANDS {
        s.push_str(&format!("  {c:<width$} {d}\n"));
    }
    s.push_str("\noptions shared by several commands:\n");
    let shared = [
        (
            "--eff e_bw=0.6,e_cp=0.4".to_string(),
            "perf, plan, simulate, calibrate: the performance model's efficiencies as \
             calibrate --fit prints them (its url_params); keys e_cp, e_cd, e_bw, e_ic \
             (fractions), e_so, e_po, e_ar (ms); keys not given keep the calibrated defaults"
                .to_string(),
        ),
        (
            "--frontend-overhead-ms MS".to_string(),
            format!(
                "simulate, plan --simulate, calibrate: the fixed part of the server's path per \
                 request beyond the engine (HTTP, hand-off, streaming), added once to TTFT and \
                 E2EL; default {DEFAULT_FRONTEND_OVERHEAD_MS} (fitted on vLLM's OpenAI server, \
                 SemiAnalysis InferenceX runs), 0 for the engine alone"
            ),
        ),
        (
            "--frontend-per-token-us US".to_string(),
            format!(
                "simulate, plan --simulate, calibrate: the server's serial work per prompt \
                 token (tokenization, one worker in arrival order); default \
                 {DEFAULT_FRONTEND_PER_TOKEN_US}"
            ),
        ),
        (
            "--step-model kernels|roofline".to_string(),
            "simulate, plan --simulate: step times from vLLM's measured kernels (default, \
             where the GPU or its architecture has tables) or the fitted roofline (implied \
             by --eff)"
                .to_string(),
        ),
    ];
    for (o, d) in shared {
        s.push_str(&format!("  {o}\n      {d}\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::run;
    use std::io::{Error, ErrorKind, Write};

    /// Takes `room` bytes, then fails every write with `kind`.
    struct Failing {
        room: usize,
        kind: ErrorKind,
    }

    impl Write for Failing {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.room == 0 {
                return Err(Error::new(self.kind, "test"));
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            Ok(n)
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn run_into(kind: ErrorKind) -> (i32, String) {
        let args: Vec<String> = ["gpus"].iter().map(|s| (*s).to_string()).collect();
        let mut out = Failing { room: 100, kind };
        let mut err = Vec::new();
        let code = run(&args, &mut out, &mut err);
        (code, String::from_utf8_lossy(&err).into_owned())
    }

    #[test]
    fn a_reader_that_stops_reading_ends_the_output_quietly() {
        let (code, err) = run_into(ErrorKind::BrokenPipe);
        assert_eq!((code, err.as_str()), (0, ""));
    }

    #[test]
    fn another_write_failure_is_one_sentence_and_status_2() {
        let (code, err) = run_into(ErrorKind::StorageFull);
        assert_eq!(code, 2);
        assert!(
            err.starts_with("llmcalc gpus: cannot write to stdout: ") && err.lines().count() == 1,
            "{err}"
        );
    }
}
