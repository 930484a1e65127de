//! The planner's derivations: TTFT and TPOT under continuous batching, then the best
//! option's end-to-end latency, per-replica rate (Little's law), replicas, GPUs, cost and
//! headroom, each with its figures.

use super::answer::PlanOption;
use super::answer::HOURS_PER_MONTH;
use super::traffic::PlanInputs;
use crate::base::derivation::{Derivation, Source, Term};
use crate::base::units::{fmt_sig, Seconds};

/// TTFT and TPOT under continuous batching (the capacity module's docs), when the passes are
/// known.
fn step_derivations(o: &PlanOption, mo: f64) -> Vec<Derivation> {
    let Some(p) = o.step_parts else {
        return Vec::new();
    };
    let ms = |x: Seconds| fmt_sig(x.ms());
    // At batch 1 nothing is in flight, so a new request waits for no step.
    let (wait, wait_note) = if o.batch > 1 {
        (format!(" + {} ms", ms(o.tpot)), "note_ttft_wait")
    } else {
        (" + 0".to_string(), "note_ttft_batch1")
    };
    let term = |sym: &str, key: &str, x: Seconds, why: String| {
        Term::num(sym, key, x.ms(), "ms", Source::Derived(why))
    };
    vec![
        Derivation {
            title_key: "plan_tpot_under_load".into(),
            formula: "t_dec(B) + t_pre(B) / Ō".into(),
            substituted: format!(
                "{} ms + {} ms / {}",
                ms(p.decode),
                ms(p.prefill_batch),
                fmt_sig(mo)
            ),
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
            ..Default::default()
        },
        Derivation {
            title_key: "plan_ttft_under_load".into(),
            formula: "t_pre(1) + TPOT(B)".into(),
            substituted: format!("{} ms{wait}", ms(p.prefill_one)),
            result: format!("{} ms", ms(o.ttft)),
            terms: vec![term(
                "t_pre(1)",
                "term_prefill_one",
                p.prefill_one,
                "src_prefill_one_prompt".into(),
            )],
            notes: vec![wait_note.into()],
            ..Default::default()
        },
    ]
}

pub(super) fn plan_derivations(o: &PlanOption, inp: &PlanInputs) -> Vec<Derivation> {
    let (_, mo) = inp.traffic.mean_lengths();
    let mut v = step_derivations(o, mo);
    v.extend([
        Derivation {
            title_key: "plan_e2e".into(),
            formula: "TTFT + (Ō − 1) × TPOT".into(),
            substituted: format!(
                "{} ms + ({} − 1) × {} ms",
                fmt_sig(o.ttft.ms()),
                fmt_sig(mo),
                fmt_sig(o.tpot.ms())
            ),
            result: format!("{} s", fmt_sig(o.e2e.0)),
            terms: vec![
                Term::num(
                    "B",
                    "term_batch",
                    o.batch as f64,
                    "",
                    Source::Derived(
                        match o.batch_limited_by.as_str() {
                            "memory" => "src_batch_limited_by_memory",
                            "ttft" => "src_batch_limited_by_ttft",
                            _ => "src_batch_limited_by_tpot",
                        }
                        .into(),
                    ),
                ),
                Term::num(
                    "Ō",
                    "term_output_len",
                    mo,
                    "unit_tokens",
                    Source::User("output_len".into()),
                ),
            ],
            notes: vec![],
            ..Default::default()
        },
        Derivation {
            result_key: "drv_n_rps".into(),
            title_key: "plan_requests_per_replica".into(),
            formula: "B / e2e".into(),
            substituted: format!("{} / {} s", o.batch, fmt_sig(o.e2e.0)),
            result: fmt_sig(o.requests_per_s_per_replica),
            terms: vec![],
            notes: vec!["note_littles_law".into()],
        },
        Derivation {
            result_key: "drv_n_replicas".into(),
            title_key: "plan_replicas_peak".into(),
            formula: "⌈λ × k_peak / r⌉".into(),
            substituted: format!(
                "⌈{} × {} / {}⌉ (× {} = {} GPU)",
                fmt_sig(inp.traffic.avg_rate_rps),
                fmt_sig(inp.traffic.peak_multiplier),
                fmt_sig(o.requests_per_s_per_replica),
                o.tp,
                o.gpus_peak
            ),
            result: o.replicas_peak.to_string(),
            terms: vec![
                Term::num(
                    "λ",
                    "term_rate",
                    inp.traffic.avg_rate_rps,
                    "view_unit_rps",
                    Source::User("rate".into()),
                ),
                Term::num(
                    "k_peak",
                    "term_peak_multiplier",
                    inp.traffic.peak_multiplier,
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
            notes: vec![],
        },
    ]);
    if let (Some(p), Some(c)) = (o.price_usd_per_gpu_hour, o.cost_per_hour_peak) {
        v.push(Derivation {
            title_key: "plan_cost_peak".into(),
            formula: "N × tp × price".into(),
            substituted: format!("{} × {} × ${}", o.replicas_peak, o.tp, fmt_sig(p)),
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
            notes: vec![],
            ..Default::default()
        });
    }
    v
}
