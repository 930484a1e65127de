//! The largest-model search: plans each model of a family on the same GPUs, traffic and
//! targets, largest first; the first that meets the targets is the answer.

use super::answer::{PlanOption, Reason};
use super::families::Family;
use super::planner::{feasibility_error, options};
use super::timing::PerfTiming;
use super::traffic::PlanInputs;
use crate::base::dtype::Dtype;
use crate::base::error::CalcError;
use crate::calc::perf::Efficiencies;
use crate::hardware::catalog::Catalog;
use crate::model::ModelDesc;
use serde::{Deserialize, Serialize};

/// Verdict for one model in "largest model that meets the target".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelVerdict {
    /// Model name.
    pub model: String,
    /// Total parameters.
    pub params_total: u64,
    /// Parameters active per token.
    pub params_active: u64,
    /// Whether the weights (plus one sequence's KV cache) fit inside one node of some candidate.
    pub fits: bool,
    /// Whether some option fits and meets the targets.
    pub meets_targets: bool,
    /// The best option for this model (cheapest at the peak among those meeting the targets).
    pub best: Option<PlanOption>,
    /// Why not, when it does not (one English sentence).
    pub why_not: Option<String>,
    /// The same as a typed error (for a translated sentence).
    #[serde(skip)]
    pub error: Option<CalcError>,
}

/// "Largest model that meets the target": plans each model on the same candidates, traffic
/// and targets; largest (total parameters) first. The first verdict with `meets_targets` is
/// the answer. Unknown GPUs and bad inputs are errors; a model that misses is a verdict.
pub fn largest_models(
    models: &[ModelDesc],
    inp: &PlanInputs,
    catalog: &Catalog,
    weights_dtype: Option<Dtype>,
    kv_dtype: Option<Dtype>,
    eff: &Efficiencies,
) -> Result<Vec<ModelVerdict>, CalcError> {
    inp.traffic.validate()?;
    inp.targets.validate()?;
    let mut out = Vec::with_capacity(models.len());
    for m in models {
        let t = PerfTiming {
            model: m,
            eff: *eff,
            weights_dtype,
            kv_dtype,
        };
        let (fits, best, error) = match options(inp, catalog, &t) {
            Ok(p) => (
                p.options
                    .iter()
                    .any(|o| o.max_batch_memory > 0 && o.reason != Some(Reason::CrossesNodes)),
                p.best_option().cloned(),
                feasibility_error(&p),
            ),
            Err(e @ (CalcError::UnknownGpu { .. } | CalcError::OutOfRange { .. })) => {
                return Err(e)
            }
            Err(e) => (false, None, Some(e)),
        };
        out.push(ModelVerdict {
            model: m.name.clone(),
            params_total: m.params.total,
            params_active: m.params.active,
            fits,
            meets_targets: best.is_some(),
            best,
            why_not: error.as_ref().map(ToString::to_string),
            error,
        });
    }
    crate::base::order::sort_by(&mut out, &|a, b| b.params_total.cmp(&a.params_total));
    Ok(out)
}

/// "Largest model that meets the target" for one [`Family`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LargestReport {
    /// The family.
    pub family: Family,
    /// One verdict per size, largest first.
    pub verdicts: Vec<ModelVerdict>,
    /// Index into `verdicts` of the largest size that meets the targets.
    pub largest: Option<usize>,
    /// Index into `verdicts` of the next smaller size that also meets the targets, to compare
    /// with (the chapter: the 8B a tuned deployment can replace with a 32B or 70B).
    pub next_smaller: Option<usize>,
}

/// [`largest_models`] over the sizes of a family.
pub fn largest_in_family(
    family: Family,
    inp: &PlanInputs,
    catalog: &Catalog,
    weights_dtype: Option<Dtype>,
    kv_dtype: Option<Dtype>,
    eff: &Efficiencies,
) -> Result<LargestReport, CalcError> {
    let models = family.models()?;
    let verdicts = largest_models(&models, inp, catalog, weights_dtype, kv_dtype, eff)?;
    let largest = verdicts.iter().position(|v| v.meets_targets);
    let next_smaller = largest.and_then(|i| {
        verdicts
            .iter()
            .enumerate()
            .skip(i + 1)
            .find(|(_, v)| v.meets_targets && v.params_total < verdicts[i].params_total)
            .map(|(j, _)| j)
    });
    Ok(LargestReport {
        family,
        verdicts,
        largest,
        next_smaller,
    })
}
