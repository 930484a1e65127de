//! Shared helpers of the views: the compared GPUs as the views need them, the weight format
//! the scenario asks for, the performance workload at a batch, and placing workloads under the
//! first roof that has a ceiling.

use crate::base::dtype::Dtype;
use crate::calc::perf;
use crate::calc::weights;
use crate::hardware::catalog::Accelerator;
use crate::model::{ModelDesc, WeightFormat};
use crate::present::report::Report;
use crate::present::series::{self, RooflineData, RooflineGpu};
use crate::scenario::Scenario;

/// One compared GPU as the views need it: its stable key and the accelerator.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewGpu {
    /// Stable key (`a10g`, `custom-1`), used in test ids.
    pub key: String,
    /// The accelerator (custom ones already validated).
    pub accelerator: Accelerator,
    /// Concurrent requests one replica serves: what memory allows at the scenario's context
    /// under the chosen budget rule, at most the requested concurrency (0 = none fits).
    pub concurrent_requests: u64,
}

impl ViewGpu {
    /// The compared GPUs of a report.
    pub fn from_report(r: &Report) -> Vec<ViewGpu> {
        r.gpus
            .iter()
            .map(|g| ViewGpu {
                key: g.key.clone(),
                accelerator: g.accelerator.clone(),
                concurrent_requests: g.requests.min(r.concurrency),
            })
            .collect()
    }
}

/// The weight format the scenario asks for: the checkpoint's, or `weight_dtype` applied.
pub fn weight_format(m: &ModelDesc, weight_dtype: Option<Dtype>) -> WeightFormat {
    match weight_dtype {
        Some(d) if d != m.weights.dtype => weights::format_for(d, m.weights.base),
        _ => m.weights.clone(),
    }
}

pub(super) fn perf_workload(s: &Scenario, batch: u64) -> perf::Workload {
    let mut wl = perf::Workload::new(
        batch,
        s.perf.input_len,
        s.perf.output_len,
        u64::from(s.tp.max(1)),
    );
    wl.weights_dtype = s.weight_dtype;
    wl.kv_dtype = s.kv_dtype;
    wl
}

/// Places workloads under the first GPU that publishes a ceiling (the A10G publishes no dense
/// 16-bit peak, so it has none) at `dtype_for(index)`, keeping the GPUs' order, and so their
/// colours. Returns the data and the anchor's index (`None` when no GPU has a ceiling: no
/// points then).
pub(super) fn place(
    mut rgpus: Vec<RooflineGpu>,
    dtype_for: impl Fn(usize) -> Dtype,
    workloads: &[series::PointSpec],
) -> (RooflineData, Option<usize>) {
    let Some(a) = rgpus.iter().position(|g| !g.ceilings.is_empty()) else {
        return (series::roofline(rgpus, Dtype::Bf16, workloads), None);
    };
    let g = rgpus.remove(a);
    rgpus.insert(0, g);
    let mut data = series::roofline(rgpus, dtype_for(a), workloads);
    if !data.gpus.is_empty() {
        let g = data.gpus.remove(0);
        data.gpus.insert(a.min(data.gpus.len()), g);
    }
    for p in &mut data.points {
        p.gpu = a;
    }
    (data, Some(a))
}

#[cfg(test)]
pub(super) mod test_util {
    //! Fixtures shared by the views' tests.

    use super::ViewGpu;
    use crate::hardware::catalog::Catalog;
    use crate::model::ModelDesc;
    use crate::present::report::model_of;
    use crate::scenario::Scenario;

    /// The scenario's model (panics with the error).
    #[track_caller]
    pub fn model(s: &Scenario) -> ModelDesc {
        match model_of(&s.model) {
            Ok(m) => m,
            Err(e) => panic!("{e}"),
        }
    }

    /// The first GPU of `g` with its 16-bit dense peaks taken away: an accelerator that
    /// publishes no compute peak (as the A10G did before a third-party figure was added).
    pub fn without_16bit_peak(mut g: Vec<ViewGpu>) -> Vec<ViewGpu> {
        use crate::hardware::catalog::Peak;
        if let Some(first) = g.first_mut() {
            first.accelerator.peaks.bf16 = Peak::NotPublished;
            first.accelerator.peaks.fp16 = Peak::NotPublished;
        }
        g
    }

    /// Catalog GPUs by id, one concurrent request each.
    pub fn gpus(ids: &[&str]) -> Vec<ViewGpu> {
        ids.iter()
            .filter_map(|id| Catalog::builtin().get(id).ok())
            .map(|a| ViewGpu {
                key: a.id.clone(),
                accelerator: a.clone(),
                concurrent_requests: 1,
            })
            .collect()
    }
}
