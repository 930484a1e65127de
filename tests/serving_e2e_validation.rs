//! The serving simulator against measured end-to-end vLLM runs: every aggregated vLLM row of
//! `fixtures/measured_serving_e2e.csv` (the development rows; provenance in
//! `fixtures/SOURCES.md`), simulated as its benchmark ran it (`fixtures/e2e_setups.csv`: the
//! client, its request and warm-up counts, the length spread, and vLLM's flags as the launch
//! scripts set them; `common/e2e.rs`).
//!
//! What is checked, and printed (the figures `docs/SERVING_SIMULATOR.md` quotes):
//! - the median and 90th-percentile |error| of the mean TTFT and the mean TPOT, overall and by
//!   model, GPU, TP and concurrency band, against the achieved levels rounded up;
//! - the four global terms fitted on these rows, re-derived here from the same run: the
//!   server's fixed path behind vLLM's OpenAI server (`DEFAULT_FRONTEND_OVERHEAD_MS`, from the
//!   InferenceX runs at 8 or fewer clients) and behind NVIDIA Dynamo's frontend
//!   (`DYNAMO_FRONTEND_OVERHEAD_MS`, AIConfigurator's own runs, same rule), and the engine's
//!   time per step with and without asynchronous scheduling (`FIT_STEP_ASYNC_S`,
//!   `FIT_STEP_SYNC_S`, from all rows of vLLM 0.14 and later, and before). Each minimises the
//!   median |error| of its statistic over its rows (a 0.25 ms grid); the terms enter the
//!   statistics additively (a fixed path adds to every TTFT, a time per step to every TPOT), so
//!   the fit and its leave-one-model-out figures are computed from one run at the committed
//!   values. The objective is flat near its minimum (the median |error| of TTFT moves by about a
//!   point between 20 and 36 ms of server path, and the additive shortcut is approximate), so
//!   the check is that the committed value is within 0.5 points of the fitted optimum, not that
//!   it equals it. The Dynamo path is the exception: on AIConfigurator's fixed-length runs the
//!   clients' phases, and so the TTFT, do not move additively with it; it is fitted by
//!   re-simulation (`dynamo_path_scan`, ignored: it prints the scan and its
//!   leave-one-model-out choice) and held at its committed value here;
//! - those leave-one-model-out figures: each model's rows predicted with the terms fitted on
//!   the other models' rows.
//!
//! Rows not simulated are counted with their reason (a data-parallel launch; a pull-request
//! run whose flags are unknown). The whole run simulates about 1,100 benchmarks of 10 or 20
//! requests per client.

mod common;

use common::e2e::{
    before_async_scheduling, behind_dynamo, engine_and_load, gpu, model, rows, setup, simulate,
    simulate_replica, Outcome, Row,
};
use common::{in_parallel, percentile};
use llm_serving_calculator::core::calc::Efficiencies;
use llm_serving_calculator::core::sim::{
    step_time::StepModel, Replica, SimResult, StepOverhead, DEFAULT_FRONTEND_OVERHEAD_MS,
    DYNAMO_FRONTEND_OVERHEAD_MS, FIT_STEP_ASYNC_S, FIT_STEP_SYNC_S,
};
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// One simulated row.
#[derive(Debug, Clone)]
struct Scored {
    row: Row,
    /// Behind NVIDIA Dynamo's frontend (AIConfigurator's own runs), else vLLM's server.
    aic: bool,
    sync: bool,
    ttft: f64,
    tpot: f64,
    frontend: f64,
    queue: f64,
    /// C × (input + output) over the KV pool in tokens (issue 44, part 4: past the capacity).
    kv_demand: f64,
    preemptions: u64,
    /// The launch ran expert parallelism or attention DP.
    parallel: bool,
}

/// Every development row simulated (or skipped, with the reason), once for the tests of this
/// file.
fn run_all() -> &'static (Vec<Scored>, BTreeMap<String, usize>) {
    static RUN: OnceLock<(Vec<Scored>, BTreeMap<String, usize>)> = OnceLock::new();
    RUN.get_or_init(simulate_all)
}

/// Each row simulated, in the rows' order, on every core.
fn simulate_in_parallel(rows: Vec<Row>) -> Vec<(Row, Outcome)> {
    let done = in_parallel(&rows, &|r| simulate(r, &|_| {}));
    rows.into_iter().zip(done).collect()
}

fn simulate_all() -> (Vec<Scored>, BTreeMap<String, usize>) {
    let mut out = Vec::new();
    let mut skipped: BTreeMap<String, usize> = BTreeMap::new();
    for (r, outcome) in simulate_in_parallel(rows()) {
        let aic = setup(&r).is_some_and(|s| behind_dynamo(&s));
        match outcome {
            Outcome::Simulated(s) => out.push(Scored {
                aic,
                sync: before_async_scheduling(&r.version),
                ttft: s.ttft_ms.mean,
                tpot: s.tpot_ms.mean,
                frontend: s.frontend_ms.mean,
                queue: s.queue_ms.mean,
                kv_demand: (r.c * (r.isl + r.osl)) as f64
                    / (s.engine.num_gpu_blocks * s.engine.block_size).max(1) as f64,
                preemptions: s.preemptions,
                parallel: s.engine.parallel.is_some_and(|p| p.ep > 1 || p.dp > 1),
                row: r,
            }),
            Outcome::Skipped(why) => *skipped.entry(why).or_default() += 1,
        }
    }
    (out, skipped)
}

/// The four global terms: (frontend vLLM ms, frontend Dynamo ms, step async ms, step sync ms).
type Terms = [f64; 4];

const COMMITTED: Terms = [
    DEFAULT_FRONTEND_OVERHEAD_MS,
    DYNAMO_FRONTEND_OVERHEAD_MS,
    FIT_STEP_ASYNC_S * 1e3,
    FIT_STEP_SYNC_S * 1e3,
];

/// |relative error| of mean TTFT and TPOT of `s` with `t` in place of the committed terms.
fn errors(s: &Scored, t: &Terms) -> (f64, f64) {
    let (f, step) = (if s.aic { 1 } else { 0 }, if s.sync { 3 } else { 2 });
    let ttft = s.ttft + (t[f] - COMMITTED[f]);
    let tpot = s.tpot + (t[step] - COMMITTED[step]);
    (
        (ttft / s.row.ttft_ms - 1.0).abs(),
        (tpot / s.row.tpot_ms - 1.0).abs(),
    )
}

/// The median |error| of `stat` (0: TTFT, 1: TPOT) over `rows` with `v` in place of term
/// `k`.
fn objective(rows: &[&Scored], k: usize, stat: usize, v: f64) -> f64 {
    let mut t = COMMITTED;
    t[k] = v;
    let mut e: Vec<f64> = rows
        .iter()
        .map(|s| {
            let (a, b) = errors(s, &t);
            if stat == 0 {
                a
            } else {
                b
            }
        })
        .collect();
    percentile(&mut e, 0.5)
}

/// The value on a 0.25 ms grid from 0 to 100 ms that minimises the median |error| of `stat`
/// over `rows` when it replaces term `k`.
fn fit_term(rows: &[&Scored], k: usize, stat: usize) -> f64 {
    let mut best = (COMMITTED[k], f64::INFINITY);
    for i in 0..=400 {
        let v = f64::from(i) * 0.25;
        let m = objective(rows, k, stat, v);
        if m < best.1 - 1e-12 {
            best = (v, m);
        }
    }
    best.0
}

/// The four terms fitted on `rows`: the server paths on the runs at 8 or fewer clients of each
/// stack, the step times on all runs with and without asynchronous scheduling.
fn fit_terms(rows: &[&Scored]) -> Terms {
    let pick = |f: &dyn Fn(&Scored) -> bool| -> Vec<&Scored> {
        rows.iter().copied().filter(|s| f(s)).collect()
    };
    let low = |aic: bool| pick(&|s| s.aic == aic && s.row.c <= 8);
    let mut t = COMMITTED;
    // The Dynamo path is not refitted here: on AIConfigurator's fixed-length runs the clients'
    // phases (and so the TTFT) do not move additively with it; `dynamo_path_scan` fits it by
    // re-simulating.
    let _ = low(true);
    for (k, group, stat) in [
        (0, low(false), 0),
        (2, pick(&|s| !s.sync), 1),
        (3, pick(&|s| s.sync), 1),
    ] {
        if !group.is_empty() {
            t[k] = fit_term(&group, k, stat);
        }
    }
    t
}

/// (median, 90th percentile) of the TTFT and TPOT errors of `rows` under `t`.
fn figures(rows: &[&Scored], t: &Terms) -> [f64; 4] {
    let (mut a, mut b): (Vec<f64>, Vec<f64>) = rows.iter().map(|s| errors(s, t)).unzip();
    [
        percentile(&mut a, 0.5),
        percentile(&mut a, 0.9),
        percentile(&mut b, 0.5),
        percentile(&mut b, 0.9),
    ]
}

fn print_by(title: &str, all: &[Scored], key: &dyn Fn(&Scored) -> String) {
    let mut groups: BTreeMap<String, Vec<&Scored>> = BTreeMap::new();
    for s in all {
        groups.entry(key(s)).or_default().push(s);
    }
    println!("\nby {title}:");
    for (k, g) in groups {
        let f = figures(&g, &COMMITTED);
        println!(
            "  {k:44} {:4} rows  TTFT {:5.1}% / {:5.1}%  TPOT {:5.1}% / {:5.1}%",
            g.len(),
            f[0] * 100.0,
            f[1] * 100.0,
            f[2] * 100.0,
            f[3] * 100.0
        );
    }
}

/// The concurrency band, its lower bound padded so that the bands print in order.
fn band(c: u64) -> String {
    let (lo, hi) = match c {
        0..=4 => (1, 4),
        5..=8 => (5, 8),
        9..=16 => (9, 16),
        17..=32 => (17, 32),
        33..=64 => (33, 64),
        65..=128 => (65, 128),
        _ => (129, 1024),
    };
    format!("C {lo:>3}-{hi}")
}

/// Where the clients' whole demand, C × (input + output), stands against the KV pool.
fn kv_band(s: &Scored) -> String {
    let b = if s.kv_demand <= 0.5 {
        "1: up to half the pool"
    } else if s.kv_demand <= 1.0 {
        "2: half to all of the pool"
    } else if s.preemptions == 0 {
        "3: over the pool, no preemption simulated"
    } else {
        "4: over the pool, preemptions simulated"
    };
    b.to_string()
}

#[test]
fn development_rows_within_the_achieved_error() {
    let (all, skipped) = run_all();
    let refs: Vec<&Scored> = all.iter().collect();
    let f = figures(&refs, &COMMITTED);
    println!(
        "{} rows simulated; median / 90th percentile |error|: mean TTFT {:.1}% / {:.1}%, mean TPOT {:.1}% / {:.1}%",
        all.len(),
        f[0] * 100.0,
        f[1] * 100.0,
        f[2] * 100.0,
        f[3] * 100.0
    );
    let (mf, mq): (f64, f64) = all
        .iter()
        .map(|s| (s.frontend, s.queue))
        .fold((0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1));
    println!(
        "mean server path {:.1} ms, mean queueing {:.1} ms over the rows",
        mf / all.len() as f64,
        mq / all.len() as f64
    );
    for (why, n) in skipped {
        println!("skipped {n} rows: {why}");
    }
    print_by("model", all, &|s| s.row.model.clone());
    print_by("GPU", all, &|s| s.row.system.clone());
    print_by("TP", all, &|s| format!("TP {}", s.row.tp));
    print_by("concurrency", all, &|s| band(s.row.c));
    print_by("parallelism", all, &|s| {
        if s.parallel {
            "expert parallelism or attention DP"
        } else {
            "tensor parallelism only"
        }
        .into()
    });
    print_by("KV demand, C x (input + output)", all, &kv_band);
    print_by("stack", all, &|s| {
        if s.aic {
            "AIConfigurator (Dynamo, aiperf)"
        } else {
            "InferenceX (vLLM server, bench)"
        }
        .into()
    });

    // Every aggregated vLLM row is simulated or skipped with a reason.
    assert_eq!(all.len() + skipped.values().sum::<usize>(), rows().len());
    assert!(skipped.values().sum::<usize>() <= 60, "skipped {skipped:?}");
    // Achieved levels, rounded up: a change that loses accuracy fails here.
    for (name, v, level) in [
        ("median TTFT", f[0], 0.14),
        ("P90 TTFT", f[1], 0.35),
        ("median TPOT", f[2], 0.10),
        ("P90 TPOT", f[3], 0.23),
    ] {
        assert!(v <= level, "{name} |error| {v:.3} above {level}");
    }
}

#[test]
fn global_terms_are_their_fit_and_hold_out_one_model_at_a_time() {
    let (all, _) = run_all();
    let refs: Vec<&Scored> = all.iter().collect();
    let fitted = fit_terms(&refs);
    println!(
        "fitted on every row: server path {:.2} ms (vLLM server), {:.2} ms (Dynamo); step {:.2} ms (async), {:.2} ms (sync)",
        fitted[0], fitted[1], fitted[2], fitted[3]
    );
    let low = |aic: bool| -> Vec<&Scored> {
        all.iter()
            .filter(|s| s.aic == aic && s.row.c <= 8)
            .collect()
    };
    let sync = |v: bool| -> Vec<&Scored> { all.iter().filter(|s| s.sync == v).collect() };
    let _ = low(true);
    for (k, name, group, stat) in [
        (0, "DEFAULT_FRONTEND_OVERHEAD_MS", low(false), 0),
        (2, "FIT_STEP_ASYNC_S", sync(false), 1),
        (3, "FIT_STEP_SYNC_S", sync(true), 1),
    ] {
        let (at, best) = (
            objective(&group, k, stat, COMMITTED[k]),
            objective(&group, k, stat, fitted[k]),
        );
        println!(
            "{name}: committed {} ms (median |error| {:.2}%), fitted {} ms ({:.2}%)",
            COMMITTED[k],
            at * 100.0,
            fitted[k],
            best * 100.0
        );
        // The fit shifts each row's figure by the term's change (first order); under
        // closed-loop clients a different committed value also moves the queueing, so the
        // optimum found from one committed value is not a fixed point: over the values tried
        // on 2026-12-07 (15.25 to 21 ms) it jumped between 14.5 and 21.5 ms with the median
        // moving by under a point. A committed value within one point of the optimum is a fit.
        assert!(
            at - best <= 0.01,
            "{name}: committed {} ms is {:.2} points off the fit's optimum at {} ms",
            COMMITTED[k],
            (at - best) * 100.0,
            fitted[k]
        );
    }
    // Leave one model out: each model's rows under the terms fitted on the others'.
    let mut models: Vec<&str> = all.iter().map(|s| s.row.model.as_str()).collect();
    models.sort();
    models.dedup();
    let (mut ttft, mut tpot) = (Vec::new(), Vec::new());
    for m in &models {
        let train: Vec<&Scored> = all.iter().filter(|s| s.row.model != *m).collect();
        let t = fit_terms(&train);
        let held: Vec<&Scored> = all.iter().filter(|s| s.row.model == *m).collect();
        let f = figures(&held, &t);
        println!(
            "held out {m:34} terms {:5.2} {:5.2} {:5.2} {:5.2} ms  TTFT {:5.1}%  TPOT {:5.1}% (medians)",
            t[0],
            t[1],
            t[2],
            t[3],
            f[0] * 100.0,
            f[2] * 100.0
        );
        for s in held {
            let (a, b) = errors(s, &t);
            ttft.push(a);
            tpot.push(b);
        }
    }
    let lomo = [
        percentile(&mut ttft.clone(), 0.5),
        percentile(&mut ttft, 0.9),
        percentile(&mut tpot.clone(), 0.5),
        percentile(&mut tpot, 0.9),
    ];
    println!(
        "leave-one-model-out: mean TTFT {:.1}% / {:.1}%, mean TPOT {:.1}% / {:.1}% (median / 90th percentile)",
        lomo[0] * 100.0,
        lomo[1] * 100.0,
        lomo[2] * 100.0,
        lomo[3] * 100.0
    );
    for (name, v, level) in [
        ("median TTFT", lomo[0], 0.14),
        ("P90 TTFT", lomo[1], 0.35),
        ("median TPOT", lomo[2], 0.12),
        ("P90 TPOT", lomo[3], 0.26),
    ] {
        assert!(
            v <= level,
            "leave-one-model-out {name} |error| {v:.3} above {level}"
        );
    }
}

/// The replica with `per_layer` seconds in place of the fitted CPU time per layer of a step
/// without a CUDA graph (unchanged for `None` or without one).
fn with_eager_layer(rep: Replica, per_layer: Option<f64>) -> Replica {
    match (per_layer, rep.step_overhead()) {
        (Some(v), Some(o)) if o.eager_per_layer > 0.0 => rep.with_step_overhead(StepOverhead {
            eager_per_layer: v,
            ..o
        }),
        _ => rep,
    }
}

/// Writes every row's measured and simulated figures to `$E2E_DUMP`, with the server paths
/// overridden by `$E2E_F_VLLM` / `$E2E_F_DYNAMO` (ms) and the CPU time per layer of a step
/// without a CUDA graph by `$E2E_EAGER_LAYER_MS` when set (development aid for the fit).
#[test]
#[ignore = "writes a file named by E2E_DUMP"]
fn dump_rows() {
    let Ok(path) = std::env::var("E2E_DUMP") else {
        return;
    };
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<f64>().ok());
    let mut out = String::from("line,model,system,precision,version,isl,osl,c,tp,dynamo,ttft_m,ttft_p,tpot_m,tpot_p,frontend_p,queue_p,note\n");
    for r in rows() {
        let dyn_ = setup(&r).is_some_and(|s| behind_dynamo(&s));
        let f = if dyn_ {
            env("E2E_F_DYNAMO")
        } else {
            env("E2E_F_VLLM")
        };
        let eager = env("E2E_EAGER_LAYER_MS");
        let res = simulate_replica(
            &r,
            &|e| {
                if let Some(f) = f {
                    e.frontend_overhead_ms = f;
                }
            },
            &|rep| with_eager_layer(rep, eager.map(|ms| ms * 1e-3)),
        );
        let (tt, tp, fr, q, note) = match res {
            Outcome::Simulated(s) => (
                s.ttft_ms.mean,
                s.tpot_ms.mean,
                s.frontend_ms.mean,
                s.queue_ms.mean,
                String::new(),
            ),
            Outcome::Skipped(w) => (f64::NAN, f64::NAN, f64::NAN, f64::NAN, w.replace(',', ";")),
        };
        out += &format!(
            "{},{},{},{},{},{},{},{},{},{},{:.3},{:.3},{:.4},{:.4},{:.3},{:.3},{}\n",
            r.line,
            r.model,
            r.system,
            r.precision,
            r.version,
            r.isl,
            r.osl,
            r.c,
            r.tp,
            dyn_,
            r.ttft_ms,
            tt,
            r.tpot_ms,
            tp,
            fr,
            q,
            note
        );
    }
    std::fs::write(path, out).expect("writes");
}

/// The Dynamo frontend's fixed path by re-simulation: AIConfigurator's runs at each candidate
/// value, the median |error| of mean TTFT at 8 or fewer clients, overall and leaving each of
/// its models out (the value chosen on the others, scored on the one left out).
#[test]
#[ignore = "about 20 simulation passes over AIConfigurator's runs; prints the scan"]
fn dynamo_path_scan() {
    let dyn_rows: Vec<Row> = rows()
        .into_iter()
        .filter(|r| setup(r).is_some_and(|s| behind_dynamo(&s)) && r.c <= 8)
        .collect();
    let candidates = [0.0, 2.0, 4.0, 6.0, 8.0, 12.0];
    // (model, candidate) -> errors
    let mut errs: BTreeMap<(String, usize), Vec<f64>> = BTreeMap::new();
    for (i, f) in candidates.iter().enumerate() {
        for r in &dyn_rows {
            if let Outcome::Simulated(s) = simulate(r, &|e| e.frontend_overhead_ms = *f) {
                errs.entry((r.model.clone(), i))
                    .or_default()
                    .push((s.ttft_ms.mean / r.ttft_ms - 1.0).abs());
            }
        }
    }
    let models: Vec<String> = {
        let mut m: Vec<String> = errs.keys().map(|k| k.0.clone()).collect();
        m.dedup();
        m
    };
    let med = |keep: &dyn Fn(&str) -> bool, i: usize| -> f64 {
        let mut v: Vec<f64> = errs
            .iter()
            .filter(|((m, j), _)| *j == i && keep(m))
            .flat_map(|(_, e)| e.clone())
            .collect();
        percentile(&mut v, 0.5)
    };
    for (i, f) in candidates.iter().enumerate() {
        println!(
            "Dynamo path {f:4.1} ms: median |TTFT error| at C <= 8 {:.1}%",
            med(&|_| true, i) * 100.0
        );
    }
    for m in &models {
        let best = (0..candidates.len())
            .min_by(|&a, &b| med(&|x| x != m, a).total_cmp(&med(&|x| x != m, b)))
            .unwrap_or(0);
        println!(
            "held out {m}: chosen {} ms on the others, its median |TTFT error| {:.1}%",
            candidates[best],
            med(&|x| x == m, best) * 100.0
        );
    }
}

/// vLLM's CPU time per layer of a step without a CUDA graph (`FIT_EAGER_LAYER_S`) by
/// re-simulation: every development row at each candidate value, the median and 90th-percentile
/// |error| of the mean TTFT and the median of the mean TPOT, then each model left out (the
/// value that minimises the others' median TTFT error, scored on the model's own rows).
#[test]
#[ignore = "nine simulation passes over every development row; prints the scan"]
fn eager_layer_scan() {
    let all = rows();
    let candidates = [0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.8];
    // Per candidate: (model, |TTFT error|, |TPOT error|) of every simulated row.
    let scans: Vec<Vec<(String, f64, f64)>> = candidates
        .iter()
        .map(|ms| {
            let done = in_parallel(&all, &|r| {
                simulate_replica(r, &|_| {}, &|rep| with_eager_layer(rep, Some(ms * 1e-3)))
            });
            all.iter()
                .zip(done)
                .filter_map(|(r, o)| match o {
                    Outcome::Simulated(s) => Some((
                        r.model.clone(),
                        (s.ttft_ms.mean / r.ttft_ms - 1.0).abs(),
                        (s.tpot_ms.mean / r.tpot_ms - 1.0).abs(),
                    )),
                    Outcome::Skipped(_) => None,
                })
                .collect()
        })
        .collect();
    let stat = |i: usize, keep: &dyn Fn(&str) -> bool, ttft: bool, q: f64| -> f64 {
        let mut v: Vec<f64> = scans[i]
            .iter()
            .filter(|(m, ..)| keep(m))
            .map(|(_, a, b)| if ttft { *a } else { *b })
            .collect();
        percentile(&mut v, q)
    };
    for (i, ms) in candidates.iter().enumerate() {
        println!(
            "{ms:4.2} ms per layer: mean TTFT {:.1}% / {:.1}%, mean TPOT {:.1}% (median / P90 / median |error|)",
            stat(i, &|_| true, true, 0.5) * 100.0,
            stat(i, &|_| true, true, 0.9) * 100.0,
            stat(i, &|_| true, false, 0.5) * 100.0
        );
    }
    let mut models: Vec<String> = scans[0].iter().map(|(m, ..)| m.clone()).collect();
    models.sort();
    models.dedup();
    // The objective: the median plus the 90th percentile of the |error| of the mean TTFT (the
    // median alone keeps falling to 0.6 ms while the tail grows from 36% to 42%).
    let objective = |i: usize, keep: &dyn Fn(&str) -> bool| -> f64 {
        stat(i, keep, true, 0.5) + stat(i, keep, true, 0.9)
    };
    let best_on = |keep: &dyn Fn(&str) -> bool| -> usize {
        (0..candidates.len())
            .min_by(|&a, &b| objective(a, keep).total_cmp(&objective(b, keep)))
            .unwrap_or(0)
    };
    println!(
        "fitted on every row: {:.2} ms per layer",
        candidates[best_on(&|_| true)]
    );
    for m in &models {
        let best = best_on(&|x| x != m);
        println!(
            "held out {m:34} chosen {:4.2} ms on the others; its median |error| TTFT {:.1}%, TPOT {:.1}%",
            candidates[best],
            stat(best, &|x| x == m, true, 0.5) * 100.0,
            stat(best, &|x| x == m, false, 0.5) * 100.0
        );
    }
}

/// Where a setup's TTFT error comes from at 4 or fewer clients (queueing small): for each
/// (model, GPU, precision, TP, prompt length), one prompt's prefill step on the kernel model
/// split into GEMMs, fused MoE, elementwise passes, all-reduces and the rest (attention, the
/// lm_head, the engine's time per step), beside the measured and simulated mean TTFT and the
/// simulated server path and queueing. `implied` is the measured TTFT less the simulated
/// server path and queueing; `ratio` is implied over simulated prefill (above 1: the
/// simulated step is too fast). A development aid: nothing is asserted.
#[test]
#[ignore = "a diagnostic; prints one line per setup"]
fn prefill_step_breakdown() {
    let seen = step_breakdowns(
        &|r| r.c <= 4,
        &|r| {
            format!(
                "{} {} {} tp{} isl{}",
                r.model.rsplit('/').next().unwrap_or(""),
                r.system,
                r.precision,
                r.tp,
                r.isl
            )
        },
        &|r, steps| {
            steps.add_prefill(0, r.isl);
            (r.isl as f64, steps.finish(r.isl, 1))
        },
        &|r, res| {
            (
                r.ttft_ms,
                res.ttft_ms.mean,
                res.frontend_ms.mean + res.queue_ms.mean,
            )
        },
    );
    for (k, (total, p, v)) in seen {
        let n = v.len().max(1) as f64;
        let mean = |f: fn(&(f64, f64, f64)) -> f64| v.iter().map(f).sum::<f64>() / n;
        let (meas, pred, before) = (mean(|x| x.0), mean(|x| x.1), mean(|x| x.2));
        let ms = |x: f64| x * 1e3;
        println!(
            "{k:<45} step {:6.1} ms = GEMM {:5.1} MoE {:5.1} elementwise {:4.1} all-reduce {:4.1} rest {:5.1} | TTFT measured {:6.1} simulated {:6.1} (server path + queue {:5.1}) implied prefill {:6.1} ratio {:.2}",
            ms(total),
            ms(p[0]),
            ms(p[1]),
            ms(p[2]),
            ms(p[3]),
            ms(total - p.iter().sum::<f64>()),
            meas,
            pred,
            before,
            meas - before,
            (meas - before) / (pred - before)
        );
    }
}

/// One step per setup (the rows `keep` takes, grouped by `key`) on the kernel model: its time
/// and its GEMM, fused-MoE, elementwise and all-reduce parts (`step` adds the step's requests
/// and returns the rows its linear layers run and its time), beside what `sample` takes from
/// each simulated row of the setup. The two diagnostics below print it.
fn step_breakdowns<V>(
    keep: &dyn Fn(&Row) -> bool,
    key: &dyn Fn(&Row) -> String,
    step: &dyn Fn(&Row, &mut StepModel) -> (f64, f64),
    sample: &dyn Fn(&Row, &SimResult) -> V,
) -> BTreeMap<String, (f64, [f64; 4], Vec<V>)> {
    let mut seen: BTreeMap<String, (f64, [f64; 4], Vec<V>)> = BTreeMap::new();
    for r in rows().into_iter().filter(|r| keep(r)) {
        let Some(s) = setup(&r) else { continue };
        let (Some(g), Some(m)) = (gpu(&r.system), model(&s)) else {
            continue;
        };
        let Outcome::Simulated(res) = simulate(&r, &|_| {}) else {
            continue;
        };
        let e = seen.entry(key(&r)).or_insert_with(|| {
            let (engine, _) = engine_and_load(&r, &s);
            let Ok(rep) = Replica::new(&m, g, &engine, &Efficiencies::default()) else {
                return (f64::NAN, [f64::NAN; 4], Vec::new());
            };
            let mut steps = rep.step_model().clone();
            steps.begin();
            let (tokens, total) = step(&r, &mut steps);
            let parts = steps
                .kernel()
                .map_or([f64::NAN; 4], |k| k.linear_parts(tokens));
            (total, parts, Vec::new())
        });
        e.2.push(sample(&r, &res));
    }
    seen
}

/// Where a setup's TPOT error comes from at 4 to 8 clients: for each (model, GPU, precision,
/// version, TP, clients, prompt length), one decode step of the clients at their mean context
/// on the kernel model, split into GEMMs, fused MoE, elementwise passes, all-reduces and the
/// rest (attention, the lm_head, the engine's time per step), beside the measured and
/// simulated mean TPOT and the time per token the simulation misses.
#[test]
#[ignore = "a diagnostic; prints one line per decode setup"]
fn decode_step_breakdown() {
    let seen = step_breakdowns(
        &|r| (4..=8).contains(&r.c),
        &|r| {
            format!(
                "{} {} {} {} tp{} c{} isl{}",
                r.model.rsplit('/').next().unwrap_or(""),
                r.system,
                r.precision,
                r.version,
                r.tp,
                r.c,
                r.isl
            )
        },
        &|r, steps| {
            steps.add_decodes(r.c, r.isl + r.osl / 2);
            (r.c as f64, steps.finish(r.c, r.c))
        },
        &|r, res| (r.tpot_ms, res.tpot_ms.mean),
    );
    for (k, (total, p, v)) in seen {
        let n = v.len().max(1) as f64;
        let (meas, pred) = (
            v.iter().map(|x| x.0).sum::<f64>() / n,
            v.iter().map(|x| x.1).sum::<f64>() / n,
        );
        let ms = |x: f64| x * 1e3;
        println!(
            "{k:<55} step {:6.2} ms = GEMM {:5.2} MoE {:5.2} elementwise {:4.2} all-reduce {:4.2} rest {:5.2} | TPOT measured {:6.2} simulated {:6.2} missing {:+5.2}",
            ms(total),
            ms(p[0]),
            ms(p[1]),
            ms(p[2]),
            ms(p[3]),
            ms(total - p.iter().sum::<f64>()),
            meas,
            pred,
            meas - pred
        );
    }
}
