//! Parallelism in the serving simulator (`core::sim::parallel`): what attention DP, expert
//! parallelism, pipeline stages and a second node do to a run, seen from its result and from
//! one step's parts. Their accuracy on measured runs is `tests/engines_e2e_validation.rs` and
//! `tests/serving_e2e_validation.rs`.

mod common;

use llm_serving_calculator::core::base::Dtype;
use llm_serving_calculator::core::calc::Efficiencies;
use llm_serving_calculator::core::hardware::{Accelerator, Catalog};
use llm_serving_calculator::core::model::{parse_model_text, preset, ModelDesc};
use llm_serving_calculator::core::sim::kernel_step::{KernelStep, StepOverhead};
use llm_serving_calculator::core::sim::{
    Arrival, Budget, EngineConfig, Lengths, Parallel, Replica, SimNote, SimResult, WorkloadSpec,
};

fn r1() -> ModelDesc {
    parse_model_text(preset("deepseek-ai__DeepSeek-R1").expect("preset").json()).expect("model")
}

fn b200() -> &'static Accelerator {
    Catalog::builtin().get("b200").expect("gpu")
}

fn h200() -> &'static Accelerator {
    Catalog::builtin().get("h200-sxm").expect("gpu")
}

fn run(engine: &EngineConfig, clients: u64) -> SimResult {
    let wl = WorkloadSpec {
        arrival: Arrival::AllAtOnce,
        max_concurrency: Some(clients),
        lengths: Lengths::Fixed {
            input: 1024,
            output: 64,
        },
        num_requests: 4 * clients,
        ..WorkloadSpec::default()
    };
    Replica::new(&r1(), h200(), engine, &Efficiencies::default())
        .and_then(|mut r| r.run(&wl, None, Budget::default()))
        .expect("simulates")
}

fn shape(tp: u64, dp: u64, ep: u64) -> EngineConfig {
    EngineConfig {
        tp,
        dp,
        ep,
        ..EngineConfig::default()
    }
}

/// Two attention-DP ranks take twice the clients of one at about the latency of one rank
/// with its share (the ranks are symmetric), and twice its throughput; the result says how
/// it was simulated and carries the shape.
#[test]
fn attention_dp_serves_twice_the_clients_at_one_ranks_latency() {
    let one = run(&shape(8, 1, 8), 16);
    let two = run(&shape(8, 2, 16), 32);
    assert_eq!(two.completed, 2 * one.completed);
    let ratio = two.output_throughput / one.output_throughput;
    assert!(ratio > 1.5 && ratio < 2.05, "throughput ×{ratio}");
    // Each MoE layer now runs on both ranks' tokens, over two nodes: no faster than one.
    assert!(
        two.tpot_ms.mean >= one.tpot_ms.mean,
        "{} {}",
        two.tpot_ms.mean,
        one.tpot_ms.mean
    );
    assert!(two.tpot_ms.mean < 2.0 * one.tpot_ms.mean);
    assert!(two.notes.iter().any(|n| matches!(
        n,
        SimNote::Parallel {
            units: 2,
            active: 2
        }
    )));
    let p = two.engine.parallel.expect("shape");
    assert_eq!((p.tp, p.dp, p.ep, p.nodes), (8, 2, 16, 2));
    assert!(one.engine.parallel.is_some(), "EP is beyond plain TP");
    assert!(run(&shape(8, 1, 1), 16).engine.parallel.is_none());
}

/// Attention DP frees memory for the KV cache: the routed experts are spread over twice the
/// GPUs, so each rank's pool holds more tokens than TP 8 alone; pipeline stages free more.
#[test]
fn dp_and_pipeline_stages_leave_more_memory_for_the_cache() {
    let m = r1();
    let blocks = |e: EngineConfig| e.resolve(&m, h200()).expect("resolves").num_gpu_blocks;
    let tp8 = blocks(shape(8, 1, 8));
    assert!(blocks(shape(8, 2, 16)) > tp8);
    let pp2 = EngineConfig {
        pp: 2,
        ..shape(8, 1, 1)
    };
    assert!(blocks(pp2) > tp8);
}

/// One decode step's parts (`KernelStep::linear_parts`: GEMMs, fused MoE, elementwise,
/// communication) for DeepSeek-R1 in NVFP4 on 8 B200s, the course's question: at one token expert
/// parallelism's MoE is no cheaper than TP's (the token's few experts sit on few GPUs, which
/// do all the work), at 4,096 tokens it is cheaper (whole experts per GPU, no split of their
/// intermediate size); a second node adds communication over the NICs.
#[test]
fn a_steps_parts_show_what_ep_and_a_second_node_change() {
    let m = r1();
    let k = |p: Parallel| {
        KernelStep::new(
            &m,
            b200(),
            p.tp,
            Some(Dtype::Fp4),
            Dtype::Fp8,
            StepOverhead::fitted(true),
        )
        .expect("tables")
        .with_parallel(p, h200())
    };
    let tp = k(Parallel {
        tp: 8,
        ep: 1,
        nodes: 2,
        ..Parallel::default()
    });
    let tp_one_node = k(Parallel {
        tp: 8,
        ..Parallel::default()
    });
    let ep = k(Parallel {
        tp: 8,
        ep: 8,
        ..Parallel::default()
    });
    let (tp1, ep1) = (tp_one_node.linear_parts(1.0)[1], ep.linear_parts(1.0)[1]);
    assert!(ep1 >= 0.9 * tp1, "batch 1: EP {ep1} TP {tp1}");
    let (tpb, epb) = (
        tp_one_node.linear_parts(4096.0)[1],
        ep.linear_parts(4096.0)[1],
    );
    assert!(epb < tpb, "4,096 tokens: EP {epb} TP {tpb}");
    // TP 8 on 8 GPUs spread over two nodes pays the NICs.
    assert!(tp.linear_parts(4096.0)[3] > tp_one_node.linear_parts(4096.0)[3]);
}
