//! "Largest model that meets the target": every size of the planner's family against its
//! traffic and targets, with a one-sentence conclusion.

use super::planner::plan_inputs;
use crate::base::error::CalcError;
use crate::base::i18n::{fill, tr, Lang};
use crate::base::units::fmt_sig;
use crate::calc::capacity::{self, Family, LargestReport, PlanInputs};
use crate::hardware::catalog::Catalog;
use crate::scenario::Scenario;

/// One size in "largest model that meets the target".
#[derive(Debug, Clone, PartialEq)]
pub struct LargestRow {
    /// Model name.
    pub name: String,
    /// Total parameters.
    pub params_total: u64,
    /// Active parameters per token.
    pub params_active: u64,
    /// Whether it fits inside one node of some candidate.
    pub fits: bool,
    /// Whether some option meets both targets.
    pub meets: bool,
    /// Whether this is the largest size that meets the targets.
    pub largest: bool,
    /// The best option, when one meets the targets.
    pub best: Option<capacity::PlanOption>,
    /// Why not, in the display language.
    pub why_not: Option<String>,
}

/// The "largest model that meets the target" section.
#[derive(Debug, Clone, PartialEq)]
pub struct LargestView {
    /// The family shown.
    pub family: Family,
    /// One row per size, largest first.
    pub rows: Vec<LargestRow>,
    /// One sentence from the live numbers (the chapter's point), when the inputs are valid.
    pub conclusion: Option<String>,
    /// Why the inputs are refused.
    pub error: Option<CalcError>,
}

/// "Largest model that meets the target" for the planner's family, candidates, traffic and
/// targets (`capacity::largest_in_family`), with a one-sentence conclusion in `lang`.
pub fn largest_view(s: &Scenario, catalog: &Catalog, lang: Lang) -> LargestView {
    let (inp, _) = plan_inputs(s);
    let family = s.views.plan.family;
    let r = capacity::largest_in_family(
        family,
        &inp,
        catalog,
        s.weight_dtype,
        s.kv_dtype,
        &s.views.eff,
    );
    match r {
        Ok(r) => LargestView {
            family,
            conclusion: Some(largest_conclusion(&r, &inp, lang)),
            rows: r
                .verdicts
                .iter()
                .enumerate()
                .map(|(i, v)| LargestRow {
                    name: v.model.clone(),
                    params_total: v.params_total,
                    params_active: v.params_active,
                    fits: v.fits,
                    meets: v.meets_targets,
                    largest: r.largest == Some(i),
                    best: v.best.clone(),
                    why_not: v.error.as_ref().map(|e| e.message(lang)),
                })
                .collect(),
            error: None,
        },
        Err(e) => LargestView {
            family,
            rows: Vec::new(),
            conclusion: None,
            error: Some(e),
        },
    }
}

fn option_name(o: &capacity::PlanOption) -> String {
    format!("{} × {}", o.gpu_name, o.tp)
}

/// The conclusion: the largest size that meets the targets against the next smaller one that
/// does.
fn largest_conclusion(r: &LargestReport, inp: &PlanInputs, lang: Lang) -> String {
    let usd = |v: Option<f64>| v.map_or("—".to_string(), |c| format!("${}", fmt_sig(c)));
    let (ttft, tpot) = (
        fmt_sig(inp.targets.ttft.ms()),
        fmt_sig(inp.targets.tpot.ms()),
    );
    // The family and the targets, then the key's own values.
    let say = |key: &str, vals: &[(&str, &str)]| {
        let mut all = vec![
            ("family", r.family.name()),
            ("ttft", ttft.as_str()),
            ("tpot", tpot.as_str()),
        ];
        all.extend_from_slice(vals);
        fill(tr(lang, key), &all)
    };
    let big = r.largest.and_then(|i| r.verdicts.get(i));
    let small = r.next_smaller.and_then(|i| r.verdicts.get(i));
    match (big, small) {
        (Some(b), Some(sm)) => {
            let (Some(bo), Some(so)) = (&b.best, &sm.best) else {
                return say("plan_largest_none", &[]);
            };
            say(
                "plan_largest_bigger",
                &[
                    ("big", &b.model),
                    ("small", &sm.model),
                    (
                        "ratio",
                        &fmt_sig(b.params_total as f64 / sm.params_total.max(1) as f64),
                    ),
                    ("big_opt", &option_name(bo)),
                    ("small_opt", &option_name(so)),
                    ("big_rps", &fmt_sig(bo.requests_per_s_per_replica)),
                    ("small_rps", &fmt_sig(so.requests_per_s_per_replica)),
                    ("big_cost", &usd(bo.usd_per_million_tokens_avg)),
                    ("small_cost", &usd(so.usd_per_million_tokens_avg)),
                    ("big_gpus", &bo.gpus_peak.to_string()),
                    ("small_gpus", &so.gpus_peak.to_string()),
                ],
            )
        }
        (Some(b), _) => say(
            "plan_largest_only",
            &[
                ("big", &b.model),
                (
                    "big_opt",
                    &b.best.as_ref().map(option_name).unwrap_or_default(),
                ),
            ],
        ),
        _ => say("plan_largest_none", &[]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::GpuChoice;

    #[test]
    fn largest_view_names_the_largest_size_in_both_languages() {
        let mut s = Scenario {
            gpus: vec![GpuChoice::Catalog("h100-sxm".into())],
            ..Scenario::default()
        };
        s.views.plan.family = Family::Llama3;
        s.views.plan.ttft_ms = 3000.0;
        s.views.plan.tpot_ms = 60.0;
        for lang in [Lang::En, Lang::Ko] {
            let v = largest_view(&s, Catalog::builtin(), lang);
            assert!(v.error.is_none(), "{:?}", v.error);
            assert_eq!(v.rows.len(), Family::Llama3.preset_ids().len());
            let picks: Vec<&LargestRow> = v.rows.iter().filter(|r| r.largest).collect();
            assert_eq!(picks.len(), 1, "{:?}", v.rows);
            let pick = picks[0];
            // The pick is the first (largest) row that meets; every row above it misses.
            let i = v.rows.iter().position(|r| r.largest).unwrap_or(usize::MAX);
            assert!(v
                .rows
                .iter()
                .take(i)
                .all(|r| !r.meets && r.why_not.is_some()));
            assert!(pick.meets);
            // Compared with the next smaller size that meets (Llama 3.1 8B below 70B).
            let c = v.conclusion.clone().unwrap_or_default();
            assert!(c.contains(&pick.name), "{c}");
            let next = v.rows.iter().skip(i + 1).find(|r| r.meets);
            let n = next.unwrap_or_else(|| panic!("{:?}", v.rows));
            assert!(
                c.contains(&n.name) && n.params_total < pick.params_total,
                "{c}"
            );
            let o = pick.best.as_ref().unwrap_or_else(|| panic!("{pick:?}"));
            assert!(c.contains(&fmt_sig(o.requests_per_s_per_replica)), "{c}");
            assert!(!c.contains('{'), "unfilled placeholder: {c}");
        }
        // Targets no size meets: the "none" sentence, rows still shown.
        s.views.plan.tpot_ms = 0.5;
        let v = largest_view(&s, Catalog::builtin(), Lang::Ko);
        assert!(v.rows.iter().all(|r| !r.meets && !r.largest));
        assert_eq!(
            v.conclusion.as_deref(),
            Some(
                fill(
                    tr(Lang::Ko, "plan_largest_none"),
                    &[
                        ("family", Family::Llama3.name()),
                        ("ttft", "3000"),
                        ("tpot", "0.5")
                    ]
                )
                .as_str()
            )
        );
        // GPUs per node 0 (not reachable from the URL, but from code): a sentence, no panic.
        s.views.plan.gpus_per_node = Some(0);
        let v = largest_view(&s, Catalog::builtin(), Lang::En);
        assert!(
            matches!(v.error, Some(CalcError::OutOfRange { .. })),
            "{v:?}"
        );
    }
}
