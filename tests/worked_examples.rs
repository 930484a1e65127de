//! Every worked example of `WORKED_EXAMPLES.md` sections 1–5 (the textbook chapter),
//! reproduced by the project's own formulas. Expected values are the textbook's stated figures
//! (with its rounding as the tolerance) or computed here independently from the definitions;
//! none is output of the code pasted back. Model sizes come from the Llama config texts in
//! `tests/fixtures/` and GPU memory from the compiled-in catalog.

use llm_serving_calculator::core::base::dtype::Dtype;
use llm_serving_calculator::core::base::units::{
    Bytes, BytesPerSecond, FlopsPerSecond, GB, GIB, KIB,
};
use llm_serving_calculator::core::calc::kv;
use llm_serving_calculator::core::calc::memory::{
    textbook_budget, textbook_for, KvProfile, TextbookInputs,
};
use llm_serving_calculator::core::calc::roofline::{
    attainable, matmul, model_ops, ridge_point, total, Bound, Pass, Phase, Precisions,
};
use llm_serving_calculator::core::calc::weights;
use llm_serving_calculator::core::hardware::catalog::{Catalog, InterconnectPreset, Peak};
use llm_serving_calculator::core::hardware::Architecture;
use llm_serving_calculator::core::model::config::parse_model_text;
use llm_serving_calculator::core::model::quick::{parse_param_count, quick_model};
use llm_serving_calculator::core::model::ModelDesc;

const LLAMA2_7B: &str = include_str!("fixtures/meta-llama__Llama-2-7b-hf.json");
const LLAMA31_8B: &str = include_str!("fixtures/meta-llama__Meta-Llama-3.1-8B.json");

fn llama2() -> ModelDesc {
    parse_model_text(LLAMA2_7B).expect("Llama-2-7b config parses")
}

#[track_caller]
fn close(got: f64, want: f64, tol: f64) {
    assert!((got - want).abs() <= tol, "got {got}, want {want} ± {tol}");
}

// ---- 1. Model size -------------------------------------------------------------------------

#[test]
fn s1_weights_from_the_name() {
    // "7 × 10^9 × 2 B = 14 × 10^9 B ≈ 14 GB".
    let p = parse_param_count("7B").expect("7B");
    assert_eq!(p, 7 * 1_000_000_000);
    let w = weights::with_dtype(&quick_model(p, Dtype::Bf16), Dtype::Bf16, 1).expect("weights");
    assert_eq!(w.total, Bytes(14 * GB));
    assert_eq!(w.total.fmt_gb(), "14 GB");
}

#[test]
fn s1_weights_from_config() {
    // 6,738,415,616 parameters (params.csv) × 2 B = 13,476,831,232 B = 13.48 GB = 12.55 GiB.
    let m = llama2();
    assert_eq!(m.params.total, 6_738_415_616);
    assert_eq!(m.weights.dtype, Dtype::Fp16); // torch_dtype "float16"
    let w = weights::checkpoint(&m, 1).expect("weights");
    assert_eq!(w.total, Bytes(6_738_415_616 * 2));
    assert_eq!(w.total.fmt_gb(), "13.48 GB");
    assert_eq!(w.total.fmt_gib(), "12.55 GiB");
    // "about 13 GB, which agrees with the estimate".
    close(w.total.gb(), 13.0, 0.5);
}

// ---- 2. KV cache per token -----------------------------------------------------------------

#[test]
fn s2_kv_per_token_and_batch() {
    let m = llama2();
    // 2 × 32 layers × 32 heads × 128 × 2 B = 524,288 B = 0.5 MiB.
    let want = 2 * 32 * 32 * 128 * 2;
    let per_tok = kv::per_token(&m, Dtype::Fp16, 1).expect("kv").bytes;
    assert_eq!(per_tok, Bytes(want));
    assert_eq!(per_tok.mib(), 0.5);
    let profile =
        KvProfile::from_model(&m, Dtype::Fp16, 1, Architecture::Unknown).expect("profile");
    assert_eq!(profile.per_token_all_layers(), Bytes(want));
    // 0.5 MiB × 4,096 × 16 = 32 GiB, more than the ~14 GB of weights.
    let batch = profile.per_batch(16, 4096);
    assert_eq!(batch, Bytes(32 * GIB));
    assert_eq!(
        kv::per_batch(&m, Dtype::Fp16, 1, 4096, 16)
            .expect("kv")
            .bytes,
        batch
    );
    let w = weights::checkpoint(&m, 1).expect("weights").total;
    assert!(batch > w);
}

#[test]
fn s2_gqa_llama3_8b_is_128_kib() {
    // Llama-3-8B: 8 KV heads → 2 × 32 × 8 × 128 × 2 = 131,072 B = 128 KiB (4× less than MHA).
    let m = parse_model_text(LLAMA31_8B).expect("config");
    let p = KvProfile::from_model(&m, Dtype::Bf16, 1, Architecture::Unknown).expect("profile");
    assert_eq!(p.per_token_all_layers(), Bytes(128 * KIB));
    assert_eq!(
        kv::per_token(&m, Dtype::Bf16, 1).expect("kv").bytes,
        Bytes(128 * KIB)
    );
}

// ---- 3. Remaining memory sets the batch size ------------------------------------------------

#[test]
fn s3_a10g_5_to_4_and_l40s_17_to_16() {
    let m = llama2();
    let w = weights::checkpoint(&m, 1).expect("weights").total;
    let profile =
        KvProfile::from_model(&m, Dtype::Fp16, 1, Architecture::Unknown).expect("profile");
    // 2 GiB per request at 4,096 tokens.
    assert_eq!(profile.per_request(4096), Bytes(2 * GIB));
    let cat = Catalog::builtin();
    for (id, theory, practice) in [("a10g", 5, 4), ("l40s", 17, 16)] {
        let acc = cat.get(id).expect("catalog");
        let (inp, b, _) = textbook_for(&m, acc, w, &profile, 4096).expect("budget");
        assert_eq!((b.theoretical, b.practical), (theory, practice), "{id}");
        // The reserve is a real, positive estimate, below the 0.437 GiB that would break 16.
        assert!(inp.activation_reserve > Bytes::ZERO);
        assert!(inp.activation_reserve.gib() < 0.437);
    }
    // The textbook's own arithmetic: (24 − 14)/2 = 5 and (48 − 14)/2 = 17, in GB.
    for (cap, want) in [(24u64, 5u64), (48, 17)] {
        let b = textbook_budget(&TextbookInputs {
            marketed_capacity: Bytes(cap * GB),
            usable_capacity: Bytes(cap * GB),
            weights: Bytes(14 * GB),
            kv_per_request: Bytes(2 * GB),
            activation_reserve: Bytes::ZERO,
        });
        assert_eq!(b.theoretical, want);
    }
}

#[test]
fn s3_l40s_is_cheaper_per_request() {
    // L40S ≈ 1.85–1.9× the A10G's hourly price but 16 vs 4 requests.
    let cat = Catalog::builtin();
    let price = |id: &str| {
        cat.get(id)
            .expect("gpu")
            .price
            .as_ref()
            .map(|p| p.usd_per_hour)
            .expect("price")
    };
    let ratio = price("l40s") / price("a10g");
    close(ratio, 1.85, 0.06);
    assert!(price("l40s") / 16.0 < price("a10g") / 4.0);
}

#[test]
fn s3_rule_of_thumb_and_growth() {
    // GPU memory ≈ 2 × model size: 28 GB for a 14 GB model.
    let q = quick_model(7_000_000_000, Dtype::Fp16);
    let w = weights::with_dtype(&q, Dtype::Fp16, 1).expect("w").total;
    let b = textbook_budget(&TextbookInputs {
        marketed_capacity: Bytes::from_gib(24),
        usable_capacity: Bytes::from_mib(23_028),
        weights: w,
        kv_per_request: Bytes(2 * GIB),
        activation_reserve: Bytes::ZERO,
    });
    assert_eq!(b.rule_of_thumb, Bytes(28 * GB));
    // KV grows while tokens are generated: size for the end of generation.
    let p =
        KvProfile::from_model(&llama2(), Dtype::Fp16, 1, Architecture::Unknown).expect("profile");
    assert!(p.per_request(4096) > p.per_request(1024));
}

// ---- 4. GPU reading ------------------------------------------------------------------------

#[test]
fn s4_decode_rereads_all_weights() {
    // Decode at batch 1: the weights dominate the bytes moved.
    let m = llama2();
    let p = Precisions::uniform(Dtype::Fp16, Dtype::Fp16, Dtype::Fp16);
    let ops = model_ops(
        &m,
        &Pass {
            phase: Phase::Decode,
            batch: 1,
            seq: 1024,
        },
        &p,
        1,
    )
    .expect("ops");
    let t = total(&ops, Phase::Decode);
    let w = weights::checkpoint(&m, 1).expect("w").total;
    // Every weight but the embedding table (a gather) is read once per token.
    let embed = Bytes(32_000 * 4096 * 2);
    assert_eq!(t.weight_bytes, w - embed);
    assert!(t.weight_bytes.0 as f64 / t.bytes.0 as f64 > 0.95);
}

#[test]
fn s4_fp8_twice_fp16_a100_none_and_links() {
    let cat = Catalog::builtin();
    for id in ["l40s", "h100-sxm"] {
        let a = cat.get(id).expect("gpu");
        let (Peak::Dense(f8), Peak::Dense(f16)) = (a.peak(Dtype::Fp8), a.peak(Dtype::Fp16)) else {
            panic!("{id} has dense fp8 and fp16 peaks");
        };
        close(f8.0 / f16.0, 2.0, 0.03);
    }
    assert_eq!(
        cat.get("a100-sxm-80gb").expect("a100").peak(Dtype::Fp8),
        Peak::NotSupported
    );
    // NVLink bridge 600 GB/s; NVSwitch 900 GB/s; 8 GPUs without a switch: 900 / 7 ≈ 128 per
    // link; across nodes ≈ 50 GB/s, 18× less than 900.
    close(
        InterconnectPreset::NvlinkBridge.bidirectional().gbps(),
        600.0,
        1e-9,
    );
    close(
        InterconnectPreset::NvlinkSwitch.bidirectional().gbps(),
        900.0,
        1e-9,
    );
    close(
        InterconnectPreset::SwitchlessMesh8.bidirectional().gbps() / 7.0,
        900.0 / 7.0,
        1.0,
    );
    close(
        900.0 / InterconnectPreset::InterNode.per_direction().gbps(),
        18.0,
        1e-9,
    );
}

// ---- 5. Arithmetic intensity and the roofline ----------------------------------------------

#[test]
fn s5_ridge_point_l40s() {
    // 362 × 10^12 / 864 × 10^9 ≈ 419 FLOP/B, from the catalog.
    let a = Catalog::builtin().get("l40s").expect("l40s");
    let Peak::Dense(peak) = a.peak(Dtype::Fp16) else {
        panic!("dense fp16")
    };
    let r = ridge_point(peak, a.bandwidth);
    close(r, 419.0, 0.5);
    // 210 FLOP/B is bandwidth-bound at 210 × 864 GB/s ≈ 181 TFLOPS; 1,000 is compute-bound.
    let at = attainable(peak, a.bandwidth, 210.0);
    assert_eq!(at.bound, Bound::Memory);
    close(at.flops_per_s.tflops(), 181.0, 0.5);
    let at = attainable(peak, a.bandwidth, 1000.0);
    assert_eq!(at.bound, Bound::Compute);
    close(at.flops_per_s.tflops(), 362.0, 0.1);
    // The textbook's rounded figures give the same verdicts.
    let p = FlopsPerSecond::from_tflops(362.0);
    let bw = BytesPerSecond::from_gbps(864.0);
    close(ridge_point(p, bw), 419.0, 0.5);
}

#[test]
fn s5_matmul_intensities() {
    // M = N = K = n: n / 3 → 341.3 and 1,365.3.
    close(matmul(1024, 1024, 1024, Dtype::Fp16).intensity, 341.3, 0.05);
    close(
        matmul(4096, 4096, 4096, Dtype::Fp16).intensity,
        1365.3,
        0.05,
    );
    // The general formula equals M·N·K / (M·K + K·N + M·N) in half precision.
    let (m, k, n) = (300.0, 700.0, 1100.0);
    close(
        matmul(300, 700, 1100, Dtype::Bf16).intensity,
        m * n * k / (m * k + k * n + m * n),
        1e-9,
    );
    // Projection s × h × h: prefill h = 4,096, s = 1,024 → 682.7 (compute-bound on L40S);
    // decode s = 1 → 0.9995.
    let pre = matmul(1024, 4096, 4096, Dtype::Fp16);
    close(pre.intensity, 682.7, 0.05);
    assert_eq!(
        attainable(
            FlopsPerSecond::from_tflops(362.0),
            BytesPerSecond::from_gbps(864.0),
            pre.intensity
        )
        .bound,
        Bound::Compute
    );
    let dec = matmul(1, 4096, 4096, Dtype::Fp16);
    close(dec.intensity, 0.9995, 0.00005);
    // Batch raises intensity (M = batch × tokens).
    assert!(matmul(16, 4096, 4096, Dtype::Fp16).intensity > 10.0 * dec.intensity);
}

#[test]
fn s5_whole_model_decode_is_about_1_flop_per_byte() {
    let m = llama2();
    let p = Precisions::uniform(Dtype::Fp16, Dtype::Fp16, Dtype::Fp16);
    let t1 = total(
        &model_ops(
            &m,
            &Pass {
                phase: Phase::Decode,
                batch: 1,
                seq: 512,
            },
            &p,
            1,
        )
        .expect("ops"),
        Phase::Decode,
    );
    close(t1.intensity, 1.0, 0.1);
    // Batch moves decode towards the ridge.
    let t64 = total(
        &model_ops(
            &m,
            &Pass {
                phase: Phase::Decode,
                batch: 64,
                seq: 512,
            },
            &p,
            1,
        )
        .expect("ops"),
        Phase::Decode,
    );
    assert!(t64.intensity > 20.0 * t1.intensity);
}

#[test]
fn s5_prefill_flops_are_2_params_tokens_plus_attention() {
    // Prefill of S tokens: 2 × (non-embedding params) × S for the matmuls, plus causal
    // attention 2 × 2 × L × H × d × S(S+1)/2 (scores and weighted sum), plus the lm_head on the
    // last token (2 × V × h) and small norm/softmax terms.
    let m = llama2();
    let s: f64 = 2048.0;
    let p = Precisions::uniform(Dtype::Fp16, Dtype::Fp16, Dtype::Fp16);
    let t = total(
        &model_ops(
            &m,
            &Pass {
                phase: Phase::Prefill,
                batch: 1,
                seq: 2048,
            },
            &p,
            1,
        )
        .expect("ops"),
        Phase::Prefill,
    );
    let body = (6_738_415_616.0 - 2.0 * 32_000.0 * 4096.0 - 65.0 * 4096.0) * 2.0 * s;
    let attn = 2.0 * 2.0 * 32.0 * 32.0 * 128.0 * s * (s + 1.0) / 2.0;
    let head = 2.0 * 32_000.0 * 4096.0;
    let want = body + attn + head;
    assert!(
        (t.flops.0 - want).abs() / want < 0.01,
        "{} vs {want}",
        t.flops.0
    );
    assert!(
        t.intensity > 419.0,
        "prefill of 2,048 tokens is compute-bound on the L40S"
    );
}
