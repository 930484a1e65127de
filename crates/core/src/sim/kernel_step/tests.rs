use super::time::marlin_moe_s;
use super::*;
use crate::calc::perf::{FIT_COMPUTE_PREFILL, FIT_MARLIN_HOPPER_MOE_COMPUTE};
use crate::hardware::Catalog;
use crate::model::{parse_model_text, preset};

fn model(id: &str) -> ModelDesc {
    parse_model_text(preset(id).expect("preset").json()).expect("model")
}

fn step(id: &str, gpu: &str, tp: u64) -> Option<KernelStep> {
    let m = model(id);
    let g = Catalog::builtin().get(gpu).expect("gpu");
    KernelStep::new(&m, g, tp, None, Dtype::Bf16, StepOverhead::fitted(true))
}

fn decode(k: &mut KernelStep, n: u64, keys: u64) -> f64 {
    k.begin();
    for _ in 0..n {
        k.add_decode(keys);
    }
    k.finish(n, n)
}

/// A lone decode step of Llama-3.1-8B in bf16 on one H100 reads its 16 GB of weights: the
/// step lies between the bandwidth's floor (4.8 ms) and 2.5 times it, and grows with the
/// batch and the context, never shrinks.
#[test]
fn a_decode_step_reads_the_weights_and_grows_with_the_batch() {
    let mut k = step("meta-llama__Meta-Llama-3.1-8B", "h100-sxm", 1).expect("tables");
    let floor = 16.06e9 / 3.35e12;
    let one = decode(&mut k, 1, 1000);
    assert!(one > floor && one < 2.5 * floor, "{one}");
    let (b8, b64) = (decode(&mut k, 8, 1000), decode(&mut k, 64, 1000));
    assert!(one < b8 && b8 < b64, "{one} {b8} {b64}");
    assert!(decode(&mut k, 64, 4000) > b64);
}

/// A prompt chunk costs more than a decode step of as many requests, and under TP the
/// step holds its all-reduces; the engine's time per step is added once.
#[test]
fn prefill_and_tensor_parallelism() {
    let mut k = step("meta-llama__Meta-Llama-3.1-70B", "h100-sxm", 4).expect("tables");
    k.begin();
    k.add_prefill(0, 2048);
    let prefill = k.finish(2048, 1);
    assert!(prefill > decode(&mut k, 64, 2048), "{prefill}");
    assert!(k.linear_parts(2048.0)[3] > 0.0, "all-reduces under TP");
    let one = step("meta-llama__Meta-Llama-3.1-70B", "h100-sxm", 1).expect("tables");
    assert_eq!(one.linear_parts(2048.0)[3], 0.0);
    let mut no = k.clone().with_overhead(StepOverhead {
        fixed: 0.0,
        ..StepOverhead::fitted(true)
    });
    let d = decode(&mut k, 8, 100) - decode(&mut no, 8, 100);
    assert!((d - FIT_STEP_ASYNC_S).abs() < 1e-12, "{d}");
}

/// vLLM's largest CUDA graph by its default rule and the flags, and a step beyond it: one
/// token more than the graph holds adds the CPU time per layer for every layer of the
/// model, a step of the graph's own size nothing.
#[test]
fn a_step_beyond_the_largest_cuda_graph_pays_per_layer() {
    assert_eq!(vllm_graph_tokens(None, 4), 8);
    assert_eq!(vllm_graph_tokens(None, 1024), 512);
    assert_eq!(vllm_graph_tokens(Some(2048), 4), 2048);
    assert_eq!(vllm_graph_tokens(Some(0), 256), 0);
    let m = model("meta-llama__Meta-Llama-3.1-70B");
    let graphs = StepOverhead::fitted(true).with_eager_steps(512);
    let plain = step("meta-llama__Meta-Llama-3.1-70B", "h100-sxm", 1).expect("tables");
    let mut eager = plain.clone().with_overhead(graphs);
    let mut plain = plain;
    let prefill = |k: &mut KernelStep, n: u64| {
        k.begin();
        k.add_prefill(0, n);
        k.finish(n, 1)
    };
    for (tokens, extra) in [(512, 0.0), (513, FIT_EAGER_LAYER_S * m.layers.len() as f64)] {
        let d = prefill(&mut eager, tokens) - prefill(&mut plain, tokens);
        assert!((d - extra).abs() < 1e-12, "{tokens} tokens: {d} s more");
    }
}

/// gpt-oss-120b's MXFP4 experts on an H200 as vLLM runs them (Marlin): a large prompt
/// chunk's experts take longer than the tables' MXFP4 kernel gives, a small decode
/// batch's less, and the time is the longer of the reached experts' bytes at the fitted
/// bandwidth and the FLOPs at Marlin's compute rate.
#[test]
fn marlin_times_mxfp4_experts_on_hopper() {
    let m = model("openai__gpt-oss-120b");
    let g = Catalog::builtin().get("h200-sxm").expect("gpu");
    let table =
        KernelStep::new(&m, g, 1, None, Dtype::Bf16, StepOverhead::fitted(true)).expect("tables");
    let marlin = table.clone().with_marlin_moe(1.0);
    let (big, small) = (8192.0, 4.0);
    assert!(marlin.linear_parts(big)[1] > 1.5 * table.linear_parts(big)[1]);
    assert!(marlin.linear_parts(small)[1] < table.linear_parts(small)[1]);
    // The parts other than the experts do not move.
    assert_eq!(marlin.linear_parts(big)[0], table.linear_parts(big)[0]);
    let (shape, _) = table.linear[0].moe.expect("moe");
    let r = table.roof;
    let sh = MoeShape {
        tokens: big,
        ..shape
    };
    let flops = 6.0 * sh.hidden * sh.inter * big * sh.top_k;
    let want = flops / (r.bf16 * FIT_COMPUTE_PREFILL * FIT_MARLIN_HOPPER_MOE_COMPUTE);
    assert!((marlin_moe_s(&r, &sh, MoeDtype::Mxfp4W4A16, 1.0) - want).abs() <= 1e-12 * want);
    assert_eq!(
        marlin.clone().without_marlin_moe().linear_parts(big),
        table.linear_parts(big)
    );
}

/// The B300 borrows the B200's efficiencies; a GPU of another vendor and a recurrent model
/// have no kernel step model.
#[test]
fn siblings_and_what_the_tables_do_not_cover() {
    let b300 = step("Qwen__Qwen3-8B", "b300", 1).expect("sibling");
    assert_eq!(b300.source(), KernelSource::Sibling);
    assert_eq!(b300.table().0, "b200_sxm");
    assert_eq!(
        step("Qwen__Qwen3-8B", "h100-sxm", 1).map(|k| k.source()),
        Some(KernelSource::Measured)
    );
    assert!(step("Qwen__Qwen3-8B", "mi300x", 1).is_none());
    assert!(step("ArthurZ__mamba-2.8b", "h100-sxm", 1).is_none());
}

/// Expert parallelism keeps every expert's whole intermediate size on its GPU and takes
/// the share of the fused MoE's time EP does not shrink.
#[test]
fn expert_parallelism_changes_the_moe_shape() {
    let tp = step("Qwen__Qwen3-30B-A3B", "h100-sxm", 4).expect("tables");
    let h100 = Catalog::builtin().get("h100-sxm").expect("gpu");
    let shape = Parallel {
        tp: 4,
        ep: 4,
        ..Parallel::default()
    };
    let ep = tp.clone().with_parallel(shape, h100);
    let (a, b) = (tp.linear_parts(256.0)[1], ep.linear_parts(256.0)[1]);
    assert!(a > 0.0 && b > 0.0 && a != b, "{a} {b}");
}
