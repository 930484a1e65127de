use super::{command, parse, Cmd, Parsed};
use crate::COMMANDS;

fn owned(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_string()).collect()
}

#[test]
fn the_flags_are_consistent() {
    command().debug_assert();
}

#[test]
fn every_command_has_help_with_its_description() {
    let c = command();
    for (name, about) in COMMANDS {
        let sub = c.find_subcommand(name).expect("a subcommand");
        assert_eq!(
            sub.get_about().map(ToString::to_string).as_deref(),
            Some(*about)
        );
        match parse(name, &owned(&["--help"])) {
            // Every calculation prints JSON; the shell's completion script is text.
            Ok(Parsed::Print(h)) => {
                assert!(
                    *name == "completions" || h.contains("--json"),
                    "{name}: {h}"
                );
            }
            _ => panic!("{name}: no help"),
        }
    }
}

#[test]
fn a_misspelled_flag_is_refused_with_the_nearest() {
    let e = parse(
        "simulate",
        &owned(&["--config", "x.json", "--max-num-seq", "8"]),
    )
    .err()
    .unwrap_or_default();
    assert_eq!(
        e,
        "unknown option --max-num-seq; did you mean --max-num-seqs? \
             (llmcalc simulate --help lists every option)"
    );
    match run(
        "simulate",
        &["--json=true", "--rate", "-1", "--enable-expert-parallel"],
    ) {
        Cmd::Simulate(s) => {
            assert!(s.json && s.engine.enable_expert_parallel);
            assert_eq!(s.serving.rate.as_deref(), Some("-1"));
        }
        other => panic!("{other:?}"),
    }
    match run("gpus", &["--json=false"]) {
        Cmd::Gpus(g) => assert!(!g.json),
        other => panic!("{other:?}"),
    }
}

/// The command `args` parse to (panics when refused).
fn run(cmd: &str, args: &[&str]) -> Cmd {
    match parse(cmd, &owned(args)) {
        Ok(Parsed::Run(c)) => *c,
        Ok(Parsed::Print(t)) => panic!("printed {t}"),
        Err(e) => panic!("refused: {e}"),
    }
}

#[test]
fn a_repeated_flag_keeps_its_last_value() {
    match run("gpus", &["--gpu", "a", "--gpu", "b"]) {
        Cmd::Gpus(g) => assert_eq!(g.gpu.as_deref(), Some("b")),
        other => panic!("{other:?}"),
    }
    // A repeatable flag keeps every value, in order.
    match run("plan", &["--gpu", "a", "--gpu", "b", "--eff", "e_bw=0.5"]) {
        Cmd::Plan(p) => {
            assert_eq!(p.gpu, ["a", "b"]);
            assert_eq!(p.serving.eff.eff, ["e_bw=0.5"]);
        }
        other => panic!("{other:?}"),
    }
}
