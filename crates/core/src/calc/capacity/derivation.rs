//! The planner's derivations: TTFT and TPOT under continuous batching, then the best
//! option's end-to-end latency, per-replica rate (Little's law), replicas, GPUs, cost and
//! headroom, each with its figures.

use super::answer::PlanOption;
use super::answer::HOURS_PER_MONTH;
use super::traffic::PlanInputs;
use crate::base::derivation::{Derivation, Source, Term};
use crate::base::expr::Expr;
use crate::base::units::{fmt_sig, Seconds};

/// TTFT and TPOT under continuous batching (the capacity module's docs), when the passes are
/// known. The results are the planner's own: for one traffic bucket they are these formulas
/// (`timing.rs`), for several the share-weighted means of each bucket's, which the mean
/// parts and `Ō` only approximate.
fn step_derivations(o: &PlanOption, mo: f64) -> Vec<Derivation> {
    let Some(p) = o.step_parts else {
        return Vec::new();
    };
    let ms = |x: Seconds| fmt_sig(x.ms());
    let at = |symbol: &str, x: Seconds| real(symbol, x.ms(), "ms");
    // At batch 1 nothing is in flight, so a new request waits for no step.
    let (wait, wait_note) = if o.batch > 1 {
        (at("TPOT(B)", o.tpot), "note_ttft_wait")
    } else {
        (Expr::sym("TPOT(B)", "0", 0.0), "note_ttft_batch1")
    };
    let tpot = Expr::add([
        at("t_dec(B)", p.decode),
        Expr::over(at("t_pre(B)", p.prefill_batch), real("Ō", mo, "")),
    ]);
    let ttft = Expr::add([at("t_pre(1)", p.prefill_one), wait]);
    let term = |sym: &str, key: &str, x: Seconds, why: String| {
        Term::num(sym, key, x.ms(), "ms", Source::Derived(why))
    };
    vec![
        Derivation {
            result: format!("{} ms", ms(o.tpot)),
            terms: vec![
                term(
                    "t_dec(B)",
                    "term_decode_step",
                    p.decode,
                    "src_decode_step_of_batch".into(),
                ),
                term(
                    "t_pre(B)",
                    "term_prefill_batch",
                    p.prefill_batch,
                    "src_prefill_pass_of_batch".into(),
                ),
            ],
            notes: vec!["note_chunked_prefill".into()],
            ..Derivation::of("plan_tpot_under_load", &tpot)
        },
        Derivation {
            result: format!("{} ms", ms(o.ttft)),
            terms: vec![term(
                "t_pre(1)",
                "term_prefill_one",
                p.prefill_one,
                "src_prefill_one_prompt".into(),
            )],
            notes: vec![wait_note.into()],
            ..Derivation::of("plan_ttft_under_load", &ttft)
        },
    ]
}

pub(super) fn plan_derivations(o: &PlanOption, inp: &PlanInputs) -> Vec<Derivation> {
    let (_, mo) = inp.traffic.mean_lengths();
    let mut v = step_derivations(o, mo);
    v.extend([
        e2e_derivation(o, mo),
        requests_derivation(o),
        replicas_derivation(o, inp),
    ]);
    v.extend(cost_derivation(o));
    v
}

/// A number as the values line shows it, with a unit after it (`12.5 ms`) or none.
fn real(symbol: &str, x: f64, unit: &str) -> Expr {
    let shown = if unit.is_empty() {
        fmt_sig(x)
    } else {
        format!("{} {unit}", fmt_sig(x))
    };
    Expr::sym(symbol, shown, x)
}

/// A request's end-to-end time: `TTFT + (Ō − 1) × TPOT`.
fn e2e_derivation(o: &PlanOption, mo: f64) -> Derivation {
    let e = Expr::add([
        real("TTFT", o.ttft.ms(), "ms"),
        Expr::mul([
            Expr::minus(real("Ō", mo, ""), Expr::int(1)),
            real("TPOT", o.tpot.ms(), "ms"),
        ]),
    ]);
    let limited_by = match o.batch_limited_by.as_str() {
        "memory" => "src_batch_limited_by_memory",
        "ttft" => "src_batch_limited_by_ttft",
        _ => "src_batch_limited_by_tpot",
    };
    Derivation {
        result: format!("{} s", fmt_sig(o.e2e.0)),
        terms: vec![
            Term::num(
                "B",
                "term_batch",
                o.batch as f64,
                "",
                Source::Derived(limited_by.into()),
            ),
            Term::num(
                "Ō",
                "term_output_len",
                mo,
                "unit_tokens",
                Source::User("output_len".into()),
            ),
        ],
        ..Derivation::of("plan_e2e", &e)
    }
}

/// Requests per second one replica serves (Little's law): `B / e2e`.
fn requests_derivation(o: &PlanOption) -> Derivation {
    let e = Expr::over(
        Expr::sym("B", o.batch.to_string(), o.batch),
        real("e2e", o.e2e.0, "s"),
    );
    Derivation {
        result_key: "drv_n_rps".into(),
        result: fmt_sig(o.requests_per_s_per_replica),
        notes: vec!["note_littles_law".into()],
        ..Derivation::of("plan_requests_per_replica", &e)
    }
}

/// Replicas for the peak: `⌈λ × k_peak / r⌉`, the GPUs they take beside the values.
fn replicas_derivation(o: &PlanOption, inp: &PlanInputs) -> Derivation {
    let t = &inp.traffic;
    let e = Expr::Aside {
        expr: Box::new(Expr::ceil(Expr::over(
            Expr::mul([
                real("λ", t.avg_rate_rps, ""),
                real("k_peak", t.peak_multiplier, ""),
            ]),
            real("r", o.requests_per_s_per_replica, ""),
        ))),
        aside: format!("× {} = {} GPU", o.tp, o.gpus_peak),
    };
    Derivation {
        result_key: "drv_n_replicas".into(),
        result: o.replicas_peak.to_string(),
        terms: vec![
            Term::num(
                "λ",
                "term_rate",
                t.avg_rate_rps,
                "view_unit_rps",
                Source::User("rate".into()),
            ),
            Term::num(
                "k_peak",
                "term_peak_multiplier",
                t.peak_multiplier,
                "×",
                Source::User("peak_multiplier".into()),
            ),
            Term::num(
                "r",
                "term_rps_per_replica",
                o.requests_per_s_per_replica,
                "view_unit_rps",
                Source::Derived("plan_requests_per_replica".into()),
            ),
        ],
        ..Derivation::of("plan_replicas_peak", &e)
    }
}

/// The cost of the peak fleet per hour, when the GPU has a price: `N × tp × price`.
fn cost_derivation(o: &PlanOption) -> Option<Derivation> {
    let (p, c) = (o.price_usd_per_gpu_hour?, o.cost_per_hour_peak?);
    let e = Expr::mul([
        Expr::sym("N", o.replicas_peak.to_string(), o.replicas_peak),
        Expr::sym("tp", o.tp.to_string(), o.tp),
        Expr::sym("price", format!("${}", fmt_sig(p)), p),
    ]);
    Some(Derivation {
        result: format!(
            "${}/h (× {} h = ${})",
            fmt_sig(c),
            fmt_sig(HOURS_PER_MONTH),
            fmt_sig(c * HOURS_PER_MONTH)
        ),
        terms: vec![
            Term::num(
                "N",
                "term_replicas_peak",
                o.replicas_peak as f64,
                "",
                Source::Derived("plan_replicas_peak".into()),
            ),
            Term::num(
                "price",
                "term_price",
                p,
                "$/GPU-h",
                Source::Catalog("price_usd_per_hour".into()),
            ),
        ],
        ..Derivation::of("plan_cost_peak", &e)
    })
}
