//! What each command accepts, as typed `clap` (derive) structs: every flag with its help line,
//! its unit and, where it has one, its default. Parsing refuses an unknown or misspelled flag
//! with the nearest known one (`llmcalc simulate --max-num-seq 8` does not run with vLLM's
//! default) and `llmcalc <command> --help` lists every flag. Numbers are checked while parsing,
//! with the same one-sentence messages the handlers gave ([`sentence`] turns any clap error into
//! one); values whose meaning depends on other flags (the core's ids, files, rates) stay text
//! here and are read by their command.

mod commands;
mod groups;
mod values;

use super::args::short;
pub use super::engine_opts::OtherEngineFlags;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{ArgAction, CommandFactory, FromArgMatches, Parser, Subcommand};

pub use commands::{
    CalibrateArgs, CompletionsArgs, DisaggFlags, GpusArgs, LoadArgs, ModelArgs, PerfArgs, PlanArgs,
    SimulateArgs, VllmArgs, DEFAULT_CONTEXT,
};
pub use groups::{Dtypes, Eff, Engine, Load, ParallelFlags, Serving, Target, VllmKnobs};
pub use values::capture_size;
pub(super) use values::{any_whole, share, utilization, whole, MAX_GIB};

/// `llmcalc`: the calculator's command line.
#[derive(Debug, Parser)]
#[command(name = "llmcalc", version, disable_help_subcommand = true)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Cmd,
}

/// The commands (their one-line descriptions are [`super::COMMANDS`]').
#[derive(Debug, Subcommand)]
pub enum Cmd {
    /// parameters, weight bytes, KV cache of one sequence, state bytes and the ledger
    Model(ModelArgs),
    /// vLLM's KV-cache budget: available GiB, GPU KV cache tokens, blocks, max concurrency
    Vllm(VllmArgs),
    /// the accelerator catalog
    Gpus(GpusArgs),
    /// TTFT, time per output token, throughput and end-to-end latency
    Perf(PerfArgs),
    /// GPUs and replicas for a request rate and its peak
    Plan(PlanArgs),
    /// model load time from storage to GPU memory
    Load(LoadArgs),
    /// one vLLM replica under load: TTFT, TPOT, ITL, E2EL percentiles, throughput, saturation
    Simulate(SimulateArgs),
    /// a vllm bench serve result beside the simulator's prediction for the same setup (--fit: also fit the efficiencies to it and print the link parameters)
    Calibrate(CalibrateArgs),
    /// a completion script for a shell: bash, zsh, fish, powershell or elvish
    Completions(CompletionsArgs),
}

// ----- Parsing -------------------------------------------------------------------------------

/// The whole command line as clap sees it: every command refuses what it does not know, a
/// repeated flag keeps its last value, and a value may start with `-` (`--rate -1` reaches the
/// check that explains why it is refused).
pub fn command() -> clap::Command {
    Cli::command().mut_subcommands(|c| {
        c.args_override_self(true).mut_args(|a| {
            if a.get_action().takes_values() && !a.is_positional() {
                a.allow_hyphen_values(true)
            } else {
                a
            }
        })
    })
}

/// What the command line asks for.
pub enum Parsed {
    /// Run a command (boxed: the flags of the largest command are many).
    Run(Box<Cmd>),
    /// Print this text and stop (`--help`).
    Print(String),
}

/// Parses `llmcalc <cmd> <rest>`; `Err` is one sentence. A switch given as `--json=true` is the
/// switch, `--json=false` its absence.
pub fn parse(cmd: &str, rest: &[String]) -> Result<Parsed, String> {
    let c = command();
    let Some(sub) = c.find_subcommand(cmd) else {
        return Err(unknown_command(cmd));
    };
    let switches: Vec<String> = sub
        .get_arguments()
        .filter(|a| matches!(a.get_action(), ArgAction::SetTrue))
        .filter_map(|a| a.get_long().map(str::to_string))
        .collect();
    let mut argv = vec!["llmcalc".to_string(), cmd.to_string()];
    for a in rest {
        let switch = a
            .strip_prefix("--")
            .and_then(|s| s.split_once('='))
            .filter(|(k, _)| switches.iter().any(|s| s == k));
        match switch {
            Some((k, "true")) => argv.push(format!("--{k}")),
            Some((_, "false")) => {}
            _ => argv.push(a.clone()),
        }
    }
    match c.try_get_matches_from(argv) {
        Ok(m) => Cli::from_arg_matches(&m)
            .map(|cli| Parsed::Run(Box::new(cli.command)))
            .map_err(|e| sentence(cmd, &e)),
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            Ok(Parsed::Print(e.render().to_string()))
        }
        Err(e) => Err(sentence(cmd, &e)),
    }
}

/// The sentence for a command that does not exist.
fn unknown_command(cmd: &str) -> String {
    format!(
        "unknown command \"{}\"; commands: {}",
        short(cmd),
        super::COMMANDS
            .iter()
            .map(|(c, _)| *c)
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// A clap error as one sentence.
pub(super) fn sentence(cmd: &str, e: &clap::Error) -> String {
    let text = |k: ContextKind| match e.get(k) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(v)) => v.first().cloned(),
        _ => None,
    };
    // `--flag <VALUE>` as clap names it → `--flag`.
    let flag = text(ContextKind::InvalidArg).map(|a| {
        let name = a.split([' ', '=']).next().unwrap_or(&a).to_string();
        short(&name).to_string()
    });
    let value = text(ContextKind::InvalidValue).unwrap_or_default();
    match (e.kind(), flag) {
        (ErrorKind::UnknownArgument, Some(f)) if f.starts_with("--") => {
            let hint = text(ContextKind::SuggestedArg)
                .map(|s| format!("; did you mean {s}?"))
                .unwrap_or_default();
            format!("unknown option {f}{hint} (llmcalc {cmd} --help lists every option)")
        }
        (ErrorKind::UnknownArgument, Some(f)) => {
            format!("unexpected argument \"{f}\"; options start with --")
        }
        (ErrorKind::InvalidValue, Some(f)) if value.is_empty() => format!("{f} needs a value"),
        (ErrorKind::InvalidValue, Some(f)) => match e.get(ContextKind::ValidValue) {
            Some(ContextValue::Strings(v)) => format!(
                "{} must be one of {}, not \"{}\"",
                f.trim_matches(['<', '>']),
                v.join(", "),
                short(&value)
            ),
            _ => format!("{f} does not take \"{}\"", short(&value)),
        },
        (ErrorKind::MissingRequiredArgument, Some(f)) => {
            format!("{} is required", f.trim_matches(['<', '>']))
        }
        (ErrorKind::ValueValidation, Some(f)) => match std::error::Error::source(e) {
            Some(why) => format!("{f} {why}"),
            None => format!("{f} does not take \"{}\"", short(&value)),
        },
        _ => {
            let first = e.render().to_string();
            let line = first.lines().next().unwrap_or("").trim();
            line.strip_prefix("error: ").unwrap_or(line).to_string()
        }
    }
}

#[cfg(test)]
mod tests;
