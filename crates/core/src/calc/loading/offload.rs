//! Offloading: decode reads every weight once per step, so weights (or the KV cache) in host
//! memory would cross the host link on every step instead of streaming from HBM; that part of the
//! step time grows by `HBM × e_bw / (link × e_link)` (≈ 48× for an H100 SXM on PCIe Gen5).
//! [`offload`] gives both next to the on-GPU figure, with their derivations.

use super::link::{HostLink, HOST_LINK_EFFICIENCY};
use super::load::{host_link_term, resolve_link};
use crate::base::derivation::{Derivation, Source, Term};
use crate::base::error::{CalcError, Phrase};
use crate::base::expr::Expr;
use crate::base::units::{fmt_sig, Bytes, BytesPerSecond, Seconds};
use crate::calc::perf::{self, Efficiencies, Workload};
use crate::hardware::catalog::Accelerator;
use crate::model::ModelDesc;
use serde::{Deserialize, Serialize};

/// Inputs of the offload comparison.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OffloadInputs {
    /// The decode being compared: batch, lengths, TP and precisions (the KV cache holds
    /// `input_len + output_len / 2` tokens per sequence on average).
    pub workload: Workload,
    /// Host-link bandwidth per direction, nominal (B/s); `None` = from the catalog.
    pub host_link: Option<BytesPerSecond>,
    /// Fraction of the nominal host link reached, 0–1.
    pub link_efficiency: f64,
}

impl Default for OffloadInputs {
    fn default() -> Self {
        OffloadInputs {
            workload: Workload::new(1, 1024, 256, 1),
            host_link: None,
            link_efficiency: HOST_LINK_EFFICIENCY,
        }
    }
}

/// Decode time per token with weights (or KV cache) on the GPU versus in host memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OffloadReport {
    /// Accelerator id.
    pub gpu: String,
    /// The host link used.
    pub host_link: HostLink,
    /// Effective GPU memory bandwidth `HBM × e_bw` (B/s).
    pub gpu_memory_bandwidth: BytesPerSecond,
    /// Effective host-link bandwidth `link × e_link` (B/s).
    pub host_link_bandwidth: BytesPerSecond,
    /// `gpu_memory_bandwidth / host_link_bandwidth`: how much slower each byte arrives.
    pub bandwidth_ratio: f64,
    /// Weight bytes streamed per decode step on one GPU (the embedding table, gathered a few
    /// rows at a time, excluded unless tied to the lm_head).
    pub weight_bytes_per_gpu: Bytes,
    /// KV-cache bytes read per decode step on one GPU (batch × mean context).
    pub kv_bytes_per_gpu: Bytes,
    /// Decode step with everything in GPU memory (the performance model's TPOT).
    pub tpot_on_gpu: Seconds,
    /// Decode step with the weights in host memory: `tpot + W × (1/link − 1/HBM)`.
    pub tpot_weights_offloaded: Seconds,
    /// Decode step with the KV cache in host memory: `tpot + KV × (1/link − 1/HBM)`.
    pub tpot_kv_offloaded: Seconds,
    /// `tpot_weights_offloaded / tpot_on_gpu`.
    pub slowdown_weights: f64,
    /// `tpot_kv_offloaded / tpot_on_gpu`.
    pub slowdown_kv: f64,
    /// Derivations of the headline numbers.
    pub derivations: Vec<Derivation>,
}

/// Checks the offload inputs: the link efficiency first (a fraction in (0, 1]), then a given
/// host-link bandwidth (finite and above zero).
fn check_link_inputs(inp: &OffloadInputs) -> Result<(), CalcError> {
    let e = inp.link_efficiency;
    if !(e.is_finite() && e > 0.0 && e <= 1.0) {
        return Err(CalcError::out_of_range(
            Phrase::tr("fld_link_eff"),
            e,
            Phrase::tr("rng_fraction"),
        ));
    }
    if let Some(l) = inp.host_link {
        if !(l.0.is_finite() && l.0 > 0.0) {
            return Err(CalcError::out_of_range(
                Phrase::tr("fld_host_link"),
                l.0 / 1e9,
                Phrase::tr("rng_above0"),
            ));
        }
    }
    Ok(())
}

/// A bandwidth as the values line shows it, in GB/s.
fn gbps_sym(symbol: &str, bw: BytesPerSecond) -> Expr {
    Expr::sym(symbol, format!("{} GB/s", fmt_sig(bw.gbps())), bw.0)
}

/// A factor as the values line shows it.
fn factor_sym(symbol: &str, x: f64) -> Expr {
    Expr::sym(symbol, fmt_sig(x), x)
}

/// The bandwidth ratio `(HBM × e_bw) / (BW_link × e_link)` of `gpu` at efficiency `e_bw` and a
/// host link of `link_nominal` at efficiency `e`.
fn ratio_expr(gpu: &Accelerator, e_bw: f64, link_nominal: BytesPerSecond, e: f64) -> Expr {
    Expr::over(
        Expr::paren(Expr::mul([
            gbps_sym("HBM", gpu.bandwidth),
            factor_sym("e_bw", e_bw),
        ])),
        Expr::mul([gbps_sym("BW_link", link_nominal), factor_sym("e_link", e)]),
    )
}

/// The TPOT with `bytes` of stream `symbol` over the host link instead of HBM, `TPOT +
/// symbol × (1 / (BW_link × e_link) − 1 / (HBM × e_bw))`, seconds; `(link, hbm)` the
/// effective bandwidths in B/s.
fn offloaded_expr(symbol: &str, tpot: f64, bytes: f64, (link, hbm): (f64, f64)) -> Expr {
    let bw = |a: &str, b: &str, x: f64| {
        let product = Expr::mul([Expr::sym(a, "", f64::NAN), Expr::sym(b, "", f64::NAN)]);
        Expr::computed(product, format!("{} GB/s", fmt_sig(x / 1e9)), x)
    };
    Expr::add([
        Expr::sym("TPOT", format!("{} ms", fmt_sig(tpot * 1e3)), tpot),
        Expr::mul([
            Expr::sym(symbol, format!("{} GB", fmt_sig(bytes / 1e9)), bytes),
            Expr::minus(
                Expr::over(Expr::int(1), bw("BW_link", "e_link", link)),
                Expr::over(Expr::int(1), bw("HBM", "e_bw", hbm)),
            ),
        ]),
    ])
}

/// The derivation of the bandwidth ratio ([`ratio_expr`]).
fn ratio_derivation(
    gpu: &Accelerator,
    eff: &Efficiencies,
    (link_nominal, user_given): (BytesPerSecond, bool),
    e: f64,
    ratio: f64,
) -> Derivation {
    let expr = ratio_expr(gpu, eff.bandwidth, link_nominal, e);
    Derivation {
        result: format!("{}×", fmt_sig(ratio)),
        terms: vec![
            Term::num(
                "HBM",
                "term_bandwidth",
                gpu.bandwidth.gbps(),
                "GB/s",
                Source::Catalog("bw_gbps".into()),
            ),
            host_link_term(link_nominal, user_given),
        ],
        ..Derivation::of("offload_bandwidth_ratio", &expr)
    }
}

/// The derivation of the TPOT with one stream of bytes over the host link,
/// `TPOT + bytes × (1 / (link × e_link) − 1 / (HBM × e_bw))`: `(title_key, symbol,
/// term_key)` name the stream, `source_key` says how its bytes are derived, `(tpot, bytes,
/// offloaded)` are in seconds and bytes, `(link, hbm)` the effective bandwidths in B/s.
fn offloaded_derivation(
    (title_key, symbol, term_key): (&str, &str, &str),
    source_key: &str,
    (tpot, bytes, offloaded): (f64, f64, f64),
    (link, hbm): (f64, f64),
) -> Derivation {
    let e = offloaded_expr(symbol, tpot, bytes, (link, hbm));
    Derivation {
        result: format!(
            "{} ms = {}× TPOT",
            fmt_sig(offloaded * 1e3),
            fmt_sig(offloaded / tpot)
        ),
        terms: vec![Term::num(
            symbol,
            term_key,
            bytes / 1e9,
            "GB",
            Source::Derived(source_key.into()),
        )],
        ..Derivation::of(title_key, &e)
    }
}

/// What decode costs if the weights or the KV cache crossed the host link every step.
///
/// The on-GPU step is the performance model's TPOT (`core::perf`). Offloading moves one stream
/// of bytes from HBM (`HBM × e_bw`) to the host link (`link × e_link`) and leaves the rest of
/// the step unchanged: `tpot_offloaded = tpot + bytes × (1 / link_eff − 1 / hbm_eff)`. When the
/// weights dominate the step (decode at small batch), the slowdown approaches the bandwidth
/// ratio `HBM × e_bw / (link × e_link)`.
pub fn offload(
    m: &ModelDesc,
    gpu: &Accelerator,
    inp: &OffloadInputs,
    eff: &Efficiencies,
) -> Result<OffloadReport, CalcError> {
    check_link_inputs(inp)?;
    let e = inp.link_efficiency;
    let wl = inp.workload;
    let r = perf::evaluate(m, gpu, &wl, eff, None)?;
    let (link_kind, link_nominal) = resolve_link(gpu, inp.host_link)?;
    let link = link_nominal.0 * e;
    let hbm = gpu.bandwidth.0 * eff.bandwidth;
    // The embedding table is gathered (B rows per step), not streamed: it stays out of the
    // per-step bytes unless it is tied to the lm_head, which reads all of it.
    let base_bytes = m.weights.base.bytes();
    let gathered = if m.tie_word_embeddings {
        0.0
    } else {
        m.params.embeddings as f64 * base_bytes / wl.tp.max(1) as f64
    };
    let w = (perf::weight_bytes_per_gpu(m, &wl) - gathered).max(0.0);
    let kv = perf::kv_bytes_per_seq_per_gpu(m, &wl, r.decode_context) * wl.batch as f64;
    let tpot = r.tpot.0;
    let tw = offloaded_expr("W", tpot, w, (link, hbm)).eval();
    let tkv = offloaded_expr("KV", tpot, kv, (link, hbm)).eval();
    let ratio = ratio_expr(gpu, eff.bandwidth, link_nominal, e).eval();
    let derivations = vec![
        ratio_derivation(gpu, eff, (link_nominal, inp.host_link.is_some()), e, ratio),
        offloaded_derivation(
            ("offload_weights_tpot", "W", "term_weights_per_gpu"),
            "src_weights_over_tp_no_embedding",
            (tpot, w, tw),
            (link, hbm),
        ),
        offloaded_derivation(
            ("offload_kv_tpot", "KV", "term_kv_bytes_step"),
            "src_batch_times_mean_context",
            (tpot, kv, tkv),
            (link, hbm),
        ),
    ];
    Ok(OffloadReport {
        gpu: gpu.id.clone(),
        host_link: link_kind,
        gpu_memory_bandwidth: BytesPerSecond(hbm),
        host_link_bandwidth: BytesPerSecond(link),
        bandwidth_ratio: ratio,
        weight_bytes_per_gpu: Bytes::saturating_from_f64(w),
        kv_bytes_per_gpu: Bytes::saturating_from_f64(kv),
        tpot_on_gpu: r.tpot,
        tpot_weights_offloaded: Seconds(tw),
        tpot_kv_offloaded: Seconds(tkv),
        slowdown_weights: tw / tpot,
        slowdown_kv: tkv / tpot,
        derivations,
    })
}

#[cfg(test)]
mod tests {
    use super::super::link::host_link;
    use super::super::load::{load_time, LoadInputs};
    use super::super::test_support::{gpu, model};
    use super::*;

    #[test]
    fn offloaded_weights_are_slower_by_about_the_bandwidth_ratio() {
        // Batch-1 decode is weight-bound: TPOT ≈ W / (HBM × e) + t_step. Moving W to the host
        // link makes it ≈ W / (link × e_link) + t_step, so the slowdown tends to the ratio.
        let m = model("meta-llama__Meta-Llama-3.1-8B");
        for id in ["h100-sxm", "l40s", "a100-sxm-80gb"] {
            let g = gpu(id);
            let eff = Efficiencies::default();
            let r =
                offload(&m, g, &OffloadInputs::default(), &eff).unwrap_or_else(|e| panic!("{e}"));
            let nominal = host_link(g).map_or(f64::NAN, |(_, b)| b.0);
            let ratio = g.bandwidth.0 * eff.bandwidth / (nominal * HOST_LINK_EFFICIENCY);
            assert!((r.bandwidth_ratio - ratio).abs() < 1e-9);
            let rel = r.slowdown_weights / ratio;
            assert!(
                rel > 0.75 && rel <= 1.0,
                "{id}: slowdown {} vs ratio {ratio}",
                r.slowdown_weights
            );
            assert!(
                r.slowdown_kv > 1.0 && r.slowdown_kv < r.slowdown_weights,
                "{id}"
            );
        }
        // Grace parts reach host memory over NVLink-C2C: a much smaller penalty than PCIe.
        let eff = Efficiencies::default();
        let gh = offload(&m, gpu("gh200-96gb"), &OffloadInputs::default(), &eff)
            .unwrap_or_else(|e| panic!("{e}"));
        let h = offload(&m, gpu("h100-sxm"), &OffloadInputs::default(), &eff)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            gh.slowdown_weights < h.slowdown_weights / 4.0,
            "{} vs {}",
            gh.slowdown_weights,
            h.slowdown_weights
        );
    }

    /// Every `link` term (load time, offload bandwidth ratio) cites the user's figure when one
    /// was given and the catalog's PCIe generation otherwise.
    #[test]
    fn the_host_link_term_cites_where_the_figure_came_from() {
        let m = model("meta-llama__Meta-Llama-3.1-8B");
        let g = gpu("h100-sxm");
        let eff = Efficiencies::default();
        let link_sources = |ds: &[Derivation]| -> Vec<Source> {
            ds.iter()
                .flat_map(|d| d.terms.iter())
                .filter(|t| t.symbol == "BW_link")
                .map(|t| t.source.clone())
                .collect()
        };
        let user = Some(BytesPerSecond::from_gbps(16.0));
        for (given, want) in [
            (None, Source::Catalog("pcie_gen".into())),
            (user, Source::User("host_link".into())),
        ] {
            let load = load_time(
                &m,
                g,
                &LoadInputs {
                    host_link: given,
                    ..LoadInputs::default()
                },
            )
            .unwrap_or_else(|e| panic!("{e}"));
            let off_inp = OffloadInputs {
                host_link: given,
                ..OffloadInputs::default()
            };
            let off = offload(&m, g, &off_inp, &eff).unwrap_or_else(|e| panic!("{e}"));
            let mut all = link_sources(&load.derivations);
            let from_offload = link_sources(&off.derivations);
            assert!(!from_offload.is_empty(), "the ratio's term");
            all.extend(from_offload);
            assert!(all.iter().all(|s| *s == want), "{given:?}: {all:?}");
        }
    }
}
