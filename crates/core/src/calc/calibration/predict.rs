//! A mapped row prepared for prediction (its model, accelerator and workload resolved once) and
//! the performance model's prediction of its metric at given efficiencies.

use super::models::{dense_model, map_model};
use super::rows::{load, CalRow, CalSet, Metric, Skipped};
use crate::base::error::{CalcError, Phrase};
use crate::calc::perf::{
    hardware, pass_work, time_pass, Efficiencies, Hardware, PassWork, Phase, Workload,
};
use crate::hardware::catalog::{Accelerator, Catalog};

/// A row with its work precomputed (independent of the efficiencies).
pub(super) struct Prepared {
    prefill: PassWork,
    decode: PassWork,
    hw: Hardware,
    tp: u64,
    batch: u64,
    output_len: u64,
}

fn prepare(r: &CalRow, catalog: &Catalog) -> Result<Prepared, CalcError> {
    let spec = map_model(&r.model).ok_or_else(|| CalcError::MissingKey {
        key: r.model.clone(),
        why: Phrase::tr("why_calibrate"),
    })?;
    let m = dense_model(spec);
    let gpu: &Accelerator = catalog.get(&r.gpu)?;
    let mut wl = Workload::new(r.batch, r.input_len, r.output_len, r.tp);
    wl.weights_dtype = Some(r.weights);
    wl.kv_dtype = Some(r.kv);
    let (hw, _) = hardware(gpu, r.weights, r.tp)?;
    Ok(Prepared {
        prefill: pass_work(&m, &wl, Phase::Prefill, 0)?,
        decode: pass_work(&m, &wl, Phase::Decode, r.input_len + r.output_len / 2)?,
        hw,
        tp: r.tp,
        batch: r.batch,
        output_len: r.output_len,
    })
}

pub(super) fn predict(p: &Prepared, metric: Metric, eff: &Efficiencies) -> f64 {
    let ttft = time_pass(&p.prefill, &p.hw, eff, p.tp).total.0;
    let tpot = if metric == Metric::Ttft {
        0.0
    } else {
        time_pass(&p.decode, &p.hw, eff, p.tp).total.0
    };
    let e2e = ttft + (p.output_len as f64 - 1.0) * tpot;
    match metric {
        Metric::Ttft => ttft * 1e3,
        Metric::Tpot => tpot * 1e3,
        Metric::E2e => e2e * 1e3,
        Metric::Throughput => p.batch as f64 * p.output_len as f64 / e2e,
    }
}

pub(super) struct Ready {
    pub(super) rows: Vec<CalRow>,
    pub(super) prepared: Vec<Prepared>,
}

pub(super) fn ready(catalog: &Catalog) -> (Ready, CalSet) {
    let set = load(catalog);
    let mut rows = Vec::new();
    let mut prepared = Vec::new();
    let mut skipped = set.skipped.clone();
    for r in &set.rows {
        match prepare(r, catalog) {
            Ok(p) => {
                rows.push(r.clone());
                prepared.push(p);
            }
            Err(e) => skipped.push(Skipped {
                line: r.line,
                model: r.model.clone(),
                metric: r.metric.id().into(),
                reason: e.to_string(),
            }),
        }
    }
    let set = CalSet { skipped, ..set };
    (Ready { rows, prepared }, set)
}
