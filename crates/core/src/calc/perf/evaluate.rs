//! The full report for one model, accelerator, TP degree and workload ([`evaluate`]): TTFT
//! (one prefill pass), TPOT (one decode step at the mean context), end-to-end latency
//! `TTFT + (O − 1) × TPOT`, output throughput `B × O / e2e`, the per-user rate `1 / TPOT`, the
//! largest batch, cost per million output tokens and energy, each with its derivation; and the
//! checks every timing starts with ([`timed_hardware`]).

use super::efficiencies::Efficiencies;
use super::hardware::{hardware, Hardware, PerfNote};
use super::pass::{
    decode_derivation, pass_derivation, term, time_pass, user_count, Deriv, PassTime, Phase,
};
use super::work::{
    check_model_tp, kv_bytes_per_seq_per_gpu, max_batch_derivation, max_batch_for, pass_work,
    sizes, weight_bytes_per_gpu,
};
use super::workload::Workload;
use crate::base::derivation::{Derivation, Source, Term};
use crate::base::dtype::Dtype;
use crate::base::error::{CalcError, Phrase};
use crate::base::expr::Expr;
use crate::base::units::{fmt_sig, usd_per_million_tokens, Seconds};
use crate::calc::memory::DEFAULT_GPU_MEMORY_UTILIZATION;
use crate::hardware::catalog::Accelerator;
use crate::model::ModelDesc;
use serde::{Deserialize, Serialize};

/// The compute precision whose dense peak `gpu` lacks when the model's compute is not timed
/// on it ([`PerfNote::NoPeak`]: TTFT and compute-bound times are then lower bounds), else
/// `None`. The same rule as [`evaluate`]'s notes, for callers that only need the verdict (the
/// capacity planner).
pub fn untimed_compute(m: &ModelDesc, gpu: &Accelerator, wl: &Workload) -> Option<Dtype> {
    let (_, fmt) = sizes(m, wl);
    let (_, notes) = hardware(gpu, fmt.dtype, wl.tp).ok()?;
    notes.into_iter().find_map(|n| match n {
        PerfNote::NoPeak { dtype, .. } => Some(dtype),
        _ => None,
    })
}

/// The checks every timing starts with (workload, efficiencies, a model with layers or a
/// parameter count, whole heads per GPU), then the hardware figures and their notes (also the
/// start of the serving simulator's step timing, `core::sim::step_time`).
pub fn timed_hardware(
    m: &ModelDesc,
    gpu: &Accelerator,
    wl: &Workload,
    eff: &Efficiencies,
) -> Result<(Hardware, Vec<PerfNote>), CalcError> {
    wl.validate()?;
    eff.validate()?;
    if m.layers.is_empty() && m.params.active == 0 {
        return Err(CalcError::MissingKey {
            key: "num_hidden_layers".into(),
            why: Phrase::tr("why_time_model"),
        });
    }
    check_model_tp(m, wl.tp)?;
    let (_, fmt) = sizes(m, wl);
    hardware(gpu, fmt.dtype, wl.tp)
}

/// The full report for one model, accelerator, TP degree and workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerfReport {
    /// Accelerator id.
    pub gpu: String,
    /// TP degree.
    pub tp: u64,
    /// Batch.
    pub batch: u64,
    /// Time to first token.
    pub ttft: Seconds,
    /// Time per output token (decode step at the chosen context).
    pub tpot: Seconds,
    /// End-to-end latency `TTFT + (O − 1) × TPOT`.
    pub e2e: Seconds,
    /// Output tokens per second, all sequences, `B × O / e2e`.
    pub output_tokens_per_s: f64,
    /// Output tokens per second seen by one user, `1 / TPOT`.
    pub output_tokens_per_s_per_user: f64,
    /// Prefill timing.
    pub prefill: PassTime,
    /// Decode-step timing.
    pub decode: PassTime,
    /// Context (tokens) of the timed decode step.
    pub decode_context: u64,
    /// Precision of the matmuls.
    pub compute_dtype: Dtype,
    /// Efficiencies used.
    pub efficiencies: Efficiencies,
    /// Largest batch memory allows for these lengths (0 = the weights do not fit).
    pub max_batch: u64,
    /// Whether the requested batch fits in memory.
    pub fits: bool,
    /// US dollars per million output tokens (when a price is known).
    pub usd_per_million_tokens: Option<f64>,
    /// US dollars per request.
    pub usd_per_request: Option<f64>,
    /// Output tokens per joule at TDP (an upper-bound power, so a lower bound on efficiency).
    pub tokens_per_joule_at_tdp: Option<f64>,
    /// Notes, typed ([`PerfNote::message`] says them in a language).
    pub notes: Vec<PerfNote>,
    /// Derivations of the headline numbers.
    pub derivations: Vec<Derivation>,
}

impl PerfReport {
    /// Whether TTFT (and other compute-bound times) are lower bounds because the accelerator
    /// publishes no dense peak at the compute precision ([`PerfNote::NoPeak`]).
    pub fn compute_untimed(&self) -> bool {
        self.notes
            .iter()
            .any(|n| matches!(n, PerfNote::NoPeak { .. }))
    }
}

/// Runs the performance model. `price_usd_per_gpu_hour` overrides the catalog price.
pub fn evaluate(
    m: &ModelDesc,
    gpu: &Accelerator,
    wl: &Workload,
    eff: &Efficiencies,
    price_usd_per_gpu_hour: Option<f64>,
) -> Result<PerfReport, CalcError> {
    let (hw, mut notes) = timed_hardware(m, gpu, wl, eff)?;
    if m.layers.is_empty() {
        notes.push(PerfNote::QuickMode);
    }
    let ctx = wl.decode_context();
    let pre_w = pass_work(m, wl, Phase::Prefill, 0)?;
    let dec_w = pass_work(m, wl, Phase::Decode, ctx)?;
    let prefill = time_pass(&pre_w, &hw, eff, wl.tp);
    let decode = time_pass(&dec_w, &hw, eff, wl.tp);
    let ttft = prefill.total;
    let tpot = decode.total;
    let e2e = Seconds(e2e_expr(ttft, tpot, wl.output_len).eval());
    let total_tps = throughput_expr(wl.batch, wl.output_len, e2e).eval();
    let user_tps = user_rate_expr(tpot).eval();
    let max_batch = max_batch_for(m, gpu, wl);
    let fits = wl.batch <= max_batch;
    if !fits {
        notes.push(PerfNote::BatchDoesNotFit {
            gpu: gpu.name.clone(),
            tp: wl.tp,
            batch: wl.batch,
            tokens: wl.input_len + wl.output_len,
            max_batch,
        });
    }
    let price = price_usd_per_gpu_hour
        .or(gpu.price.as_ref().map(|p| p.usd_per_hour))
        .filter(|p| p.is_finite() && *p >= 0.0);
    let gpus = wl.tp as f64;
    // Dollars a second over tokens a second.
    let usd_per_million = price.map(|p| usd_per_million_tokens(p * gpus / 3600.0, total_tps));
    let usd_per_request = price.map(|p| p * gpus / 3600.0 * e2e.0 / wl.batch as f64);
    let tpj = gpu
        .tdp_w
        .filter(|w| *w > 0.0)
        .map(|w| energy_expr(total_tps, w, wl.tp).eval());
    let usable = gpu.capacity().0 as f64 * DEFAULT_GPU_MEMORY_UTILIZATION;
    let memory = (
        usable,
        weight_bytes_per_gpu(m, wl),
        kv_bytes_per_seq_per_gpu(m, wl, wl.input_len + wl.output_len),
        max_batch,
    );
    let derivations = derivations(&Deriv {
        memory,
        gpu,
        wl,
        eff,
        hw: &hw,
        prefill: &prefill,
        decode: &decode,
        ctx,
        e2e,
        total_tps,
        price,
        usd_per_million,
        tpj,
    });
    Ok(PerfReport {
        gpu: gpu.id.clone(),
        tp: wl.tp,
        batch: wl.batch,
        ttft,
        tpot,
        e2e,
        output_tokens_per_s: total_tps,
        output_tokens_per_s_per_user: user_tps,
        prefill,
        decode,
        decode_context: ctx,
        compute_dtype: hw.compute_dtype,
        efficiencies: *eff,
        max_batch,
        fits,
        usd_per_million_tokens: usd_per_million,
        usd_per_request,
        tokens_per_joule_at_tdp: tpj,
        notes,
        derivations,
    })
}

/// A time as the values line shows it, in milliseconds.
fn ms_sym(symbol: &str, t: Seconds) -> Expr {
    Expr::sym(symbol, format!("{} ms", fmt_sig(t.ms())), t.0)
}

/// A count as the values line shows it.
fn count_sym(symbol: &str, n: u64) -> Expr {
    Expr::sym(symbol, n.to_string(), n)
}

/// The end-to-end latency of `o` output tokens, `TTFT + (O − 1) × TPOT`, in seconds.
fn e2e_expr(ttft: Seconds, tpot: Seconds, o: u64) -> Expr {
    Expr::add([
        ms_sym("TTFT", ttft),
        Expr::mul([
            Expr::minus(count_sym("O", o), Expr::int(1)),
            ms_sym("TPOT", tpot),
        ]),
    ])
}

/// The output throughput of `batch` sequences of `o` tokens in `e2e`, `B × O / e2e`, tok/s.
fn throughput_expr(batch: u64, o: u64, e2e: Seconds) -> Expr {
    let e2e = Expr::sym("e2e", format!("{} s", fmt_sig(e2e.0)), e2e.0);
    Expr::over(Expr::mul([count_sym("B", batch), count_sym("O", o)]), e2e)
}

/// The rate one user sees, `1 / TPOT`, tok/s.
fn user_rate_expr(tpot: Seconds) -> Expr {
    let tpot = Expr::sym("TPOT", format!("{} s", fmt_sig(tpot.0)), tpot.0);
    Expr::over(Expr::int(1), tpot)
}

/// Dollars per million output tokens at `p` dollars per GPU-hour on `tp` GPUs producing `tps`
/// tokens a second, `price × tp / 3600 / TPS × 10^6`.
fn cost_expr(p: f64, tp: u64, tps: f64) -> Expr {
    let per_second = Expr::over(
        Expr::mul([
            Expr::sym("price", format!("{p} $/h"), p),
            count_sym("tp", tp),
        ]),
        Expr::int(3600),
    );
    let tps = Expr::sym("TPS", fmt_sig(tps), tps);
    Expr::mul([Expr::over(per_second, tps), Expr::sym("10^6", "10^6", 1e6)])
}

/// Output tokens per joule at `w` watts per GPU on `tp` GPUs, `TPS / (TDP × tp)`.
fn energy_expr(tps: f64, w: f64, tp: u64) -> Expr {
    Expr::over(
        Expr::sym("TPS", fmt_sig(tps), tps),
        Expr::mul([Expr::sym("TDP", format!("{w} W"), w), count_sym("tp", tp)]),
    )
}

/// The derivation of the end-to-end latency, `TTFT + (O − 1) × TPOT`.
fn e2e_derivation(d: &Deriv) -> Derivation {
    let o = d.wl.output_len as f64;
    let e = e2e_expr(d.prefill.total, d.decode.total, d.wl.output_len);
    Derivation {
        result: format!("{} ms", fmt_sig(d.e2e.ms())),
        terms: vec![term(
            "O",
            "term_output_len",
            o,
            "unit_tokens",
            Source::User("output_len".into()),
        )],
        ..Derivation::of("perf_e2e_latency", &e)
    }
}

/// The derivation of the output throughput, `B × O / e2e`.
fn throughput_derivation(d: &Deriv) -> Derivation {
    let e = throughput_expr(d.wl.batch, d.wl.output_len, d.e2e);
    Derivation {
        result: format!("{} tok/s", fmt_sig(d.total_tps)),
        terms: vec![user_count("B", "term_batch", d.wl.batch, "batch")],
        ..Derivation::of("perf_output_tokens_per_s", &e)
    }
}

/// The derivation of the cost per million output tokens, when a price is known.
fn cost_derivation(d: &Deriv) -> Option<Derivation> {
    if let (Some(p), Some(c)) = (d.price, d.usd_per_million) {
        let e = cost_expr(p, d.wl.tp, d.total_tps);
        Some(Derivation {
            result: format!("${}", fmt_sig(c)),
            terms: vec![
                term(
                    "price",
                    "term_price",
                    p,
                    "$/GPU-h",
                    Source::Catalog("price_usd_per_hour".into()),
                ),
                tps_term(d),
            ],
            ..Derivation::of("perf_usd_per_million_tokens", &e)
        })
    } else {
        None
    }
}

/// `TPS`, the output throughput the cost and energy derivations divide by.
fn tps_term(d: &Deriv) -> Term {
    term(
        "TPS",
        "term_tps",
        d.total_tps,
        "tok/s",
        Source::Derived("perf_output_tokens_per_s".into()),
    )
}

/// The derivation of tokens per joule at the TDP, when the TDP is known.
fn energy_derivation(d: &Deriv) -> Option<Derivation> {
    if let (Some(w), Some(t)) = (d.gpu.tdp_w, d.tpj) {
        let e = energy_expr(d.total_tps, w, d.wl.tp);
        Some(Derivation {
            result: format!("{} tok/J", fmt_sig(t)),
            terms: vec![
                term("TDP", "term_tdp", w, "W", Source::Catalog("tdp_w".into())),
                tps_term(d),
            ],
            notes: vec!["note_tdp_upper_bound".into()],
            ..Derivation::of("perf_tokens_per_joule", &e)
        })
    } else {
        None
    }
}

/// Every derivation of the performance model, in report order: TTFT, TPOT, e2e latency,
/// output throughput, per-user rate, max batch, then cost and energy when known.
fn derivations(d: &Deriv) -> Vec<Derivation> {
    let mut v = vec![
        pass_derivation(d, d.prefill, "perf_ttft", d.eff.compute_prefill),
        decode_derivation(d),
        e2e_derivation(d),
        throughput_derivation(d),
    ];
    let user = user_rate_expr(d.decode.total);
    v.push(Derivation {
        result: format!("{} tok/s", fmt_sig(user.eval())),
        ..Derivation::of("perf_tokens_per_s_per_user", &user)
    });
    v.push(max_batch_derivation(d));
    v.extend(cost_derivation(d));
    v.extend(energy_derivation(d));
    v
}

#[cfg(test)]
mod tests {
    use super::super::pass::Limit;
    use super::super::sweep::sweep;
    use super::super::workload::DecodeContext;
    use super::*;
    use crate::calc::calibration::{dense_model, map_model};
    use crate::hardware::catalog::Catalog;

    fn llama7b() -> ModelDesc {
        map_model("Llama-2-7B")
            .map(dense_model)
            .unwrap_or_else(|| panic!("Llama-2-7B spec"))
    }

    fn gpu(id: &str) -> &'static Accelerator {
        Catalog::builtin().get(id).unwrap_or_else(|e| panic!("{e}"))
    }

    #[track_caller]
    fn eval(m: &ModelDesc, g: &str, wl: &Workload) -> PerfReport {
        evaluate(m, gpu(g), wl, &Efficiencies::default(), None).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The cost's number comes from `usd_per_million_tokens`, the concept's one home (the
    /// planner and the cost chart call it too); its derivation's formula computes the same.
    #[test]
    fn cost_formula_is_usd_per_million_tokens() {
        for (p, tp, tps) in [(2.99, 1, 1234.5), (4.5, 8, 17.25), (0.0, 2, 3.0)] {
            let home = usd_per_million_tokens(p * tp as f64 / 3600.0, tps);
            assert_eq!(cost_expr(p, tp, tps).eval(), home);
        }
        let e = cost_expr(2.5, 2, 100.0);
        assert_eq!(e.formula(), "price × tp / 3600 / TPS × 10^6");
        assert_eq!(e.values(), "2.5 $/h × 2 / 3600 / 100 × 10^6");
    }

    #[test]
    fn batch1_decode_is_weight_bytes_over_effective_bandwidth() {
        // Decode at batch 1 reads every weight once: TPOT ≈ W / (BW × e_bw) + t_step.
        // Llama-2-7B bf16 on A100 SXM 80GB: W = 13,476,831,232 B; BW = 2,039 GB/s.
        let m = llama7b();
        let wl = Workload::new(1, 128, 2, 1);
        let r = eval(&m, "a100-sxm-80gb", &wl);
        let e = Efficiencies::default();
        let w = weight_bytes_per_gpu(&m, &wl);
        assert_eq!(w, 13_476_831_232.0);
        // The embedding table is not streamed (only B rows are gathered): V × h × 2 B.
        let streamed = w - 32000.0 * 4096.0 * 2.0;
        let expect =
            streamed / (gpu("a100-sxm-80gb").bandwidth.0 * e.bandwidth) + e.step_overhead_s;
        // The KV cache of ≤ 129 tokens (≤ 68 MB) and activations add a little.
        let rel = r.tpot.0 / expect - 1.0;
        assert!(
            (0.0..0.01).contains(&rel),
            "tpot {} vs {expect}: {rel}",
            r.tpot.0
        );
        assert_eq!(r.decode.bound, Limit::Memory);
    }

    #[test]
    fn prefill_flops_are_two_params_per_token_plus_attention() {
        // Matmuls: 2 × (attention + MLP params) × S; lm_head on the last token: 2 × h × V;
        // attention: per layer 4 × heads × head_dim × S(S+1)/2 (QKᵀ and PV, causal).
        let m = llama7b();
        let s = 2048u64;
        let w = pass_work(&m, &Workload::new(1, s, 1, 1), Phase::Prefill, 0)
            .unwrap_or_else(|e| panic!("{e}"));
        let f: f64 = w.ops.iter().map(|o| o.flops.0).sum();
        let p = &m.params;
        let sf = s as f64;
        let attn = 32.0 * 4.0 * 32.0 * 128.0 * sf * (sf + 1.0) / 2.0;
        let expect = 2.0 * (p.attention + p.mlp) as f64 * sf + 2.0 * 4096.0 * 32000.0 + attn;
        // Norms, activation functions and rotary embeddings add well under 0.5%.
        assert!(
            (0.0..0.005).contains(&(f / expect - 1.0)),
            "{f} vs {expect}"
        );
        // And the rule of thumb 2 × params × tokens holds within the attention share (~5%).
        let rough = 2.0 * p.total as f64 * sf;
        assert!((f / rough - 1.0).abs() < 0.06, "{f} vs {rough}");
    }

    #[test]
    fn throughput_rises_with_batch_until_memory_runs_out() {
        let m = llama7b();
        let g = gpu("l40s");
        let wl = Workload::new(1, 1024, 1024, 1);
        let e = Efficiencies::default();
        let curve = sweep(&m, g, &wl, &e, 64).unwrap_or_else(|e| panic!("{e}"));
        let max_b = max_batch_for(&m, g, &wl);
        assert!(max_b > 4, "{max_b}");
        assert_eq!(curve.last().map(|p| p.batch), Some(max_b));
        for pair in curve.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            assert!(b.tokens_per_s_total > a.tokens_per_s_total, "{a:?} → {b:?}");
            assert!(
                b.tokens_per_s_per_user <= a.tokens_per_s_per_user,
                "{a:?} → {b:?}"
            );
        }
        let over = evaluate(
            &m,
            g,
            &Workload {
                batch: max_b + 1,
                ..wl
            },
            &e,
            None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(!over.fits);
        let at = evaluate(&m, g, &Workload { batch: max_b, ..wl }, &e, None)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(at.fits);
    }

    #[test]
    fn tpot_rises_with_context() {
        let m = llama7b();
        let t: Vec<f64> = [128u64, 2048, 8192]
            .iter()
            .map(|&i| eval(&m, "h100-sxm", &Workload::new(8, i, 128, 1)).tpot.0)
            .collect();
        assert!(t[0] < t[1] && t[1] < t[2], "{t:?}");
        let mean = eval(&m, "h100-sxm", &Workload::new(8, 2048, 2048, 1));
        let end = eval(
            &m,
            "h100-sxm",
            &Workload {
                context: DecodeContext::End,
                ..Workload::new(8, 2048, 2048, 1)
            },
        );
        assert_eq!(mean.decode_context, 3072);
        assert_eq!(end.decode_context, 4096);
        assert!(end.tpot.0 > mean.tpot.0);
    }

    #[test]
    fn tensor_parallelism_cuts_per_gpu_work_and_adds_communication() {
        let m = map_model("Llama-2-70B")
            .map(dense_model)
            .unwrap_or_else(|| panic!("spec"));
        let r: Vec<PerfReport> = [1u64, 2, 4, 8]
            .iter()
            .map(|&tp| {
                let mut wl = Workload::new(16, 512, 128, tp);
                wl.weights_dtype = Some(Dtype::Fp8);
                eval(&m, "h100-sxm", &wl)
            })
            .collect();
        assert_eq!(r[0].decode.comm.0, 0.0);
        for w in r.windows(2) {
            assert!(
                w[1].decode.ops.0 < w[0].decode.ops.0,
                "per-GPU op time falls"
            );
            assert!(
                w[1].decode.comm.0 > w[0].decode.comm.0,
                "communication grows"
            );
            assert!(w[1].prefill.comm.0 > w[0].prefill.comm.0);
        }
        // Two all-reduces per layer of B × S × h × 2 bytes; ring over NVSwitch 450 GB/s one way.
        let e = Efficiencies::default();
        let bytes = 16.0 * 8192.0 * 2.0;
        let one = 2.0 * 3.0 / 4.0 * bytes / (450e9 * e.interconnect) + e.allreduce_latency_s;
        let got = r[2].decode.comm.0;
        assert!((got / (160.0 * one) - 1.0).abs() < 1e-9, "{got}");
    }

    #[test]
    fn fp8_on_a100_computes_at_16_bit_with_a_note() {
        let m = llama7b();
        let mut wl = Workload::new(1, 128, 16, 1);
        wl.weights_dtype = Some(Dtype::Fp8);
        let a100 = eval(&m, "a100-sxm-80gb", &wl);
        assert_eq!(a100.compute_dtype.bits(), 16);
        assert!(!a100.notes.is_empty());
        let h100 = eval(&m, "h100-sxm", &wl);
        assert_eq!(h100.compute_dtype, Dtype::Fp8);
        // fp8 weights halve the bytes read per decode step.
        let w16 = weight_bytes_per_gpu(&m, &Workload::new(1, 128, 16, 1));
        let w8 = weight_bytes_per_gpu(&m, &wl);
        assert!(w8 < 0.52 * w16 && w8 > 0.5 * w16, "{w8} vs {w16}");
    }

    #[test]
    fn cost_and_energy_follow_throughput() {
        let m = llama7b();
        let wl = Workload::new(16, 512, 256, 1);
        let r = evaluate(&m, gpu("l40s"), &wl, &Efficiencies::default(), Some(2.0))
            .unwrap_or_else(|e| panic!("{e}"));
        // $/M tokens = price × GPUs / 3600 / (tokens/s) × 10^6.
        let c = 2.0 / 3600.0 / r.output_tokens_per_s * 1e6;
        assert_eq!(r.usd_per_million_tokens, Some(c));
        let per_req = 2.0 / 3600.0 * r.e2e.0 / 16.0;
        assert_eq!(r.usd_per_request, Some(per_req));
        let tdp = gpu("l40s").tdp_w.unwrap_or(f64::NAN);
        assert_eq!(r.tokens_per_joule_at_tdp, Some(r.output_tokens_per_s / tdp));
        assert!(r
            .derivations
            .iter()
            .any(|d| d.title_key == "perf_tokens_per_joule"));
        // Every key a derivation names has a translation.
        for d in &r.derivations {
            assert!(crate::base::i18n::has(&d.title_key), "{}", d.title_key);
            for t in &d.terms {
                assert!(crate::base::i18n::has(&t.name_key), "{}", t.name_key);
            }
            for n in &d.notes {
                assert!(crate::base::i18n::has(n), "{n}");
            }
        }
    }

    #[test]
    fn e2e_is_ttft_plus_decode_steps() {
        let m = llama7b();
        let r = eval(&m, "h100-sxm", &Workload::new(4, 1000, 200, 1));
        assert!((r.e2e.0 - (r.ttft.0 + 199.0 * r.tpot.0)).abs() < 1e-12);
        assert!((r.output_tokens_per_s - 4.0 * 200.0 / r.e2e.0).abs() < 1e-9);
        assert!((r.output_tokens_per_s_per_user - 1.0 / r.tpot.0).abs() < 1e-9);
    }

    #[test]
    fn every_preset_on_every_kind_of_chip_gives_finite_times() {
        // MoE, MLA, sliding windows, Mamba and hybrids: no panic, no NaN, positive times.
        let e = Efficiencies::default();
        for p in crate::model::presets::all() {
            let Ok(m) = p.parse() else { continue };
            for g in [
                "h100-sxm",
                "a100-sxm-80gb",
                "l40s",
                "a10g",
                "mi300x",
                "tpu-v5e",
                "m4-max",
                "b200",
            ] {
                for (wd, tp) in [
                    (None, 1),
                    (Some(Dtype::Fp8), 2),
                    (Some(Dtype::Int4), 1),
                    (Some(Dtype::Fp4), 8),
                ] {
                    let mut wl = Workload::new(4, 1000, 200, tp);
                    wl.weights_dtype = wd;
                    match evaluate(&m, gpu(g), &wl, &e, None) {
                        Ok(r) => {
                            for (what, v) in [
                                ("perf_ttft", r.ttft.0),
                                ("perf_tpot", r.tpot.0),
                                ("e2e", r.e2e.0),
                                ("tok/s", r.output_tokens_per_s),
                            ] {
                                assert!(
                                    v.is_finite() && v > 0.0,
                                    "{} on {g} {wd:?} tp{tp}: {what} = {v}",
                                    p.id
                                );
                            }
                            assert!(r.tpot.0 >= e.step_overhead_s);
                        }
                        // Only typed errors: TP not dividing heads, a missing link or figure.
                        Err(err) => assert!(!err.to_string().is_empty()),
                    }
                }
            }
        }
    }

    #[test]
    fn bad_inputs_are_errors_not_panics() {
        let m = llama7b();
        let e = Efficiencies::default();
        assert!(evaluate(&m, gpu("h100-sxm"), &Workload::new(0, 1, 1, 1), &e, None).is_err());
        assert!(evaluate(&m, gpu("h100-sxm"), &Workload::new(1, 1, 1, 0), &e, None).is_err());
        let bad = Efficiencies {
            bandwidth: 0.0,
            ..e
        };
        assert!(evaluate(&m, gpu("h100-sxm"), &Workload::new(1, 1, 1, 1), &bad, None).is_err());
        let nan = Efficiencies {
            step_overhead_s: f64::NAN,
            ..e
        };
        assert!(nan.validate().is_err());
    }
}
