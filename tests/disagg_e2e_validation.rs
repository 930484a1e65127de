//! The disaggregated simulator (`core::sim::disagg`) against measured disaggregated runs: the
//! rows of `fixtures/measured_serving_e2e.csv` with `mode=disagg` that give both pools' worker
//! counts, each replayed as its launch ran it (`fixtures/e2e_setups_disagg.csv`: each pool's
//! workers, shape and flags, the link, the client), and the mean TTFT and mean TPOT compared.
//! The step model, the engines and the server's path are the aggregated ones.
//!
//! Prints the median and 90th-percentile |error| per engine, per GPU and overall, and the
//! skipped rows by reason; asserts, on the rows at 16 clients or fewer, the figures this
//! simulator reaches today (so that a change that makes them worse fails), not the issue's
//! targets (25% / 15%), which the whole set does not meet yet. One global term is fitted on
//! these rows, the hand-off's fixed cost (`fit_handoff_latency`, with each model held out).
//!
//! `cargo test --release --test disagg_e2e_validation -- --nocapture` prints the tables;
//! `-- --ignored --nocapture every_row` the whole set's, `per_row` one line per row.

mod common;

use common::disagg_e2e::{rows, simulate, Outcome};
use common::e2e::Row;
use llm_serving_calculator::core::sim::DEFAULT_KV_TRANSFER_LATENCY_MS;
use std::collections::BTreeMap;

/// The `q` quantile of `v`'s finite values (numpy's convention, as every other validation
/// reports it: the core's `quantile`).
fn quantile(v: &[f64], q: f64) -> f64 {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if s.is_empty() {
        return f64::NAN;
    }
    common::percentile(&mut s, q)
}

/// One simulated row: (its group keys, TTFT error, TPOT error) as signed ratios − 1.
struct Compared {
    engine: String,
    system: String,
    ttft: f64,
    tpot: f64,
}

fn compare(rows: &[Row]) -> (Vec<Compared>, BTreeMap<String, usize>) {
    let mut done = Vec::new();
    let mut skipped: BTreeMap<String, usize> = BTreeMap::new();
    for r in rows {
        match simulate(r, DEFAULT_KV_TRANSFER_LATENCY_MS) {
            Outcome::Simulated(res) => done.push(Compared {
                engine: r.engine.id().to_string(),
                system: r.system.clone(),
                ttft: res.ttft_ms.mean / r.ttft_ms - 1.0,
                tpot: res.tpot_ms.mean / r.tpot_ms - 1.0,
            }),
            Outcome::Skipped(why) => {
                let key: String = why.chars().take(110).collect();
                *skipped.entry(key).or_default() += 1;
            }
        }
    }
    (done, skipped)
}

/// (median, P90) of |error| of the rows `keep` keeps, TTFT then TPOT.
fn figures(done: &[Compared], keep: &dyn Fn(&Compared) -> bool) -> (usize, [f64; 4]) {
    let sel: Vec<&Compared> = done.iter().filter(|c| keep(c)).collect();
    let ttft: Vec<f64> = sel.iter().map(|c| c.ttft.abs()).collect();
    let tpot: Vec<f64> = sel.iter().map(|c| c.tpot.abs()).collect();
    (
        sel.len(),
        [
            quantile(&ttft, 0.5),
            quantile(&ttft, 0.9),
            quantile(&tpot, 0.5),
            quantile(&tpot, 0.9),
        ],
    )
}

fn print_line(label: &str, n: usize, f: [f64; 4], signed: (f64, f64)) {
    println!(
        "  {label:<28} {n:>4} rows  TTFT {:>6.1}% / {:>6.1}%  TPOT {:>6.1}% / {:>6.1}%  (signed medians {:+.1}% / {:+.1}%)",
        f[0] * 100.0,
        f[1] * 100.0,
        f[2] * 100.0,
        f[3] * 100.0,
        signed.0 * 100.0,
        signed.1 * 100.0
    );
}

fn signed(done: &[Compared], keep: &dyn Fn(&Compared) -> bool) -> (f64, f64) {
    let sel: Vec<&Compared> = done.iter().filter(|c| keep(c)).collect();
    (
        quantile(&sel.iter().map(|c| c.ttft).collect::<Vec<_>>(), 0.5),
        quantile(&sel.iter().map(|c| c.tpot).collect::<Vec<_>>(), 0.5),
    )
}

/// Prints the tables for `rows`; returns the overall (rows, [TTFT median, P90, TPOT median,
/// P90]).
fn report(title: &str, rows: &[Row]) -> (usize, [f64; 4]) {
    let (done, skipped) = compare(rows);
    println!(
        "{title}: {}; simulated {}; skipped {}",
        rows.len(),
        done.len(),
        rows.len() - done.len()
    );
    for (why, n) in &skipped {
        println!("  skipped {n:>3}: {why}");
    }
    println!("mean TTFT and mean TPOT, |error| median / 90th percentile:");
    let all = figures(&done, &|_| true);
    print_line("all", all.0, all.1, signed(&done, &|_| true));
    for (what, key) in [
        (
            "engine",
            (|c: &Compared| c.engine.clone()) as fn(&Compared) -> String,
        ),
        ("GPU", |c: &Compared| c.system.clone()),
    ] {
        let mut groups: Vec<String> = done.iter().map(key).collect();
        groups.sort();
        groups.dedup();
        for g in &groups {
            let f = figures(&done, &|c| &key(c) == g);
            print_line(
                &format!("{what} {g}"),
                f.0,
                f.1,
                signed(&done, &|c| &key(c) == g),
            );
        }
    }
    all
}

/// The rows at 16 clients or fewer (66 of 274; seconds to simulate, where the whole set
/// takes minutes): within the error reached on 7 Dec 2026, a few points of slack, so that a
/// change that makes the disaggregated answers worse fails here.
#[test]
fn low_concurrency_rows_within_the_achieved_error() {
    let all = rows();
    assert!(
        all.len() >= 270,
        "{} disaggregated rows with worker counts",
        all.len()
    );
    let low: Vec<Row> = all.into_iter().filter(|r| r.c <= 16).collect();
    let (n, [ttft_med, ttft_p90, tpot_med, tpot_p90]) =
        report("disaggregated rows at 16 clients or fewer", &low);
    assert!(n >= 60, "only {n} rows simulated");
    assert!(ttft_med <= 0.23, "TTFT median |error| {ttft_med}");
    assert!(ttft_p90 <= 1.10, "TTFT P90 |error| {ttft_p90}");
    assert!(tpot_med <= 0.29, "TPOT median |error| {tpot_med}");
    assert!(tpot_p90 <= 0.53, "TPOT P90 |error| {tpot_p90}");
}

/// Every disaggregated row with worker counts (a report: minutes in release;
/// `cargo test --release --test disagg_e2e_validation -- --ignored --nocapture every_row`).
#[test]
#[ignore = "a report over every row; minutes"]
fn every_row_report() {
    let (n, _) = report("disaggregated rows with worker counts", &rows());
    assert!(n >= 250, "only {n} rows simulated");
}

/// One line per simulated row: its launch, the measured and simulated means and TTFT's
/// simulated stages (a diagnostic; `--ignored --nocapture`).
#[test]
#[ignore = "a diagnostic; prints one line per row"]
fn per_row_breakdown() {
    for r in rows() {
        let Outcome::Simulated(res) = simulate(&r, DEFAULT_KV_TRANSFER_LATENCY_MS) else {
            continue;
        };
        let Some(d) = &res.disagg else { continue };
        println!(
            "{:>5} {:<6} {:<9} {:<4} {:>5}/{:<5} c{:<5} P{}x{} D{}x{} | TTFT {:>8.1} vs {:>8.1} (pre {:>7.1} xfer {:>5.1} dec {:>6.1}) | TPOT {:>6.2} vs {:>6.2} | busy {:.2}/{:.2} batch {:.1}",
            r.line,
            r.engine.id(),
            r.system,
            r.precision,
            r.isl,
            r.osl,
            r.c,
            d.prefill_workers,
            d.prefill_gpus,
            d.decode_workers,
            d.decode_gpus,
            r.ttft_ms,
            res.ttft_ms.mean,
            d.prefill_stage_ms.mean,
            d.transfer_ms.mean,
            d.decode_first_ms.mean,
            r.tpot_ms,
            res.tpot_ms.mean,
            d.prefill_busy,
            d.decode_busy,
            d.decode_mean_batch
        );
    }
}

/// The fixed cost of one hand-off (`DisaggConfig::transfer_latency_ms`) that best fits the
/// rows at 16 clients or fewer (where queueing does not hide it): the median |TTFT error| at
/// each candidate, on every model and with each model held out (a report; `--ignored`).
#[test]
#[ignore = "a fit; re-simulates the low-concurrency rows at each candidate latency"]
fn fit_handoff_latency() {
    let rows: Vec<Row> = rows().into_iter().filter(|r| r.c <= 16).collect();
    let candidates = [1.0, 50.0, 100.0, 125.0, 150.0, 175.0, 200.0, 250.0];
    // (model, measured, simulated at each candidate, engine)
    let mut table: Vec<(String, f64, Vec<f64>, String)> = Vec::new();
    for r in &rows {
        let sims: Vec<f64> = candidates
            .iter()
            .map(|&l| match simulate(r, l) {
                Outcome::Simulated(res) => res.ttft_ms.mean,
                Outcome::Skipped(_) => f64::NAN,
            })
            .collect();
        if sims.iter().all(|x| x.is_finite()) {
            table.push((r.model.clone(), r.ttft_ms, sims, r.engine.id().to_string()));
        }
    }
    let med = |sel: &dyn Fn(&str) -> bool, i: usize| {
        let e: Vec<f64> = table
            .iter()
            .filter(|(m, _, _, _)| sel(m))
            .map(|(_, meas, s, _)| (s[i] / meas - 1.0).abs())
            .collect();
        (quantile(&e, 0.5), e.len())
    };
    for engine in ["sglang", "trtllm", "vllm"] {
        let line: Vec<String> = (0..candidates.len())
            .map(|i| {
                let e: Vec<f64> = table
                    .iter()
                    .filter(|x| x.3 == engine)
                    .map(|(_, meas, s, _)| (s[i] / meas - 1.0).abs())
                    .collect();
                format!("{}:{:.1}%", candidates[i], quantile(&e, 0.5) * 100.0)
            })
            .collect();
        println!("  {engine}: {}", line.join(" "));
    }
    println!("{} rows at 16 clients or fewer", table.len());
    for (i, l) in candidates.iter().enumerate() {
        let (m, n) = med(&|_| true, i);
        println!(
            "  latency {l:>5} ms: median |TTFT error| {:.1}% over {n} rows",
            m * 100.0
        );
    }
    let mut models: Vec<String> = table.iter().map(|(m, _, _, _)| m.clone()).collect();
    models.sort();
    models.dedup();
    for held in &models {
        let best = (0..candidates.len())
            .min_by(|&a, &b| {
                med(&|m| m != held, a)
                    .0
                    .total_cmp(&med(&|m| m != held, b).0)
            })
            .unwrap_or(0);
        let (m, n) = med(&|m| m == held, best);
        println!(
            "  held out {held}: fitted on the others {} ms; its {n} rows {:.1}%",
            candidates[best],
            m * 100.0
        );
    }
}
