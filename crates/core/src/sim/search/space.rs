//! The search space: every parallel shape of one engine instance the planner tries on a GPU,
//! and the prefill:decode worker ratios of a disaggregated deployment.
//!
//! Shapes, for `g` GPUs in powers of two up to the search's largest deployment:
//! - tensor parallelism inside one node (`tp = g`, `g` up to the node's GPUs);
//! - beyond a node, pipeline stages of one node each (`tp` = the node, `pp = g / node`);
//! - for a mixture of experts, attention data parallelism `dp` (every power of two dividing
//!   `g`, `tp = g / dp` inside a node) with the experts split by tensor parallelism (`ep` 1) or
//!   spread whole over every GPU of a stage (`ep = tp × dp`).
//!
//! Dense models take no attention DP: their data parallelism is more replicas, which the
//! planner counts itself. Each shape is then held to the model's and the engine's rules
//! (`Parallel::check`); a shape that breaks one is counted with its reason, not tried.

use crate::model::ModelDesc;
use crate::sim::parallel::{routed_experts, Parallel};

/// The worker counts tried on either side of a disaggregated deployment, prefill × decode
/// (the ratios in lowest terms: `2:2` is two deployments of `1:1`, which the replica count
/// covers).
pub const PREFILL_WORKERS: [u64; 4] = [1, 2, 3, 4];
/// Decode workers tried against each prefill count.
pub const DECODE_WORKERS: [u64; 6] = [1, 2, 3, 4, 6, 8];

/// Powers of two from 1 to `max`.
fn powers(max: u64) -> impl Iterator<Item = u64> {
    (0..63).map(|i| 1u64 << i).take_while(move |&g| g <= max)
}

/// Every shape of up to `max_gpus` GPUs (module docs), before the rules: the caller checks
/// each with `Parallel::check`.
pub fn shapes(model: &ModelDesc, node: u64, max_gpus: u64) -> Vec<Parallel> {
    let node = node.max(1);
    let moe = routed_experts(model).is_some();
    let mut out = Vec::new();
    let mut push = |p: Parallel| {
        if !out.contains(&p) {
            out.push(p);
        }
    };
    let base = Parallel::default();
    for g in powers(max_gpus) {
        if g <= node {
            push(Parallel { tp: g, ..base });
        } else if g.is_multiple_of(node) {
            push(Parallel {
                tp: node,
                pp: g / node,
                ..base
            });
        }
        if !moe {
            continue;
        }
        for dp in powers(g) {
            let tp = g / dp;
            if tp > node || !g.is_multiple_of(dp) {
                continue;
            }
            for ep in [1, g] {
                if dp == 1 && ep == 1 && g > node {
                    continue;
                }
                push(Parallel { tp, dp, ep, ..base });
            }
        }
    }
    out
}

/// The (prefill, decode) worker counts of a disaggregated deployment within `max_gpus`,
/// each ratio once in lowest terms.
pub fn ratios(prefill_gpus: u64, decode_gpus: u64, max_gpus: u64) -> Vec<(u64, u64)> {
    let gcd = |mut a: u64, mut b: u64| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let mut out = Vec::new();
    for x in PREFILL_WORKERS {
        for y in DECODE_WORKERS {
            let gpus = x
                .saturating_mul(prefill_gpus)
                .saturating_add(y.saturating_mul(decode_gpus));
            if gcd(x, y) == 1 && gpus <= max_gpus {
                out.push((x, y));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{parse_model_text, preset};

    fn model(id: &str) -> ModelDesc {
        parse_model_text(preset(id).expect("preset").json()).expect("model")
    }

    #[test]
    fn a_dense_model_gets_tensor_and_pipeline_shapes_only() {
        let m = model("meta-llama__Meta-Llama-3.1-70B");
        let s = shapes(&m, 8, 32);
        let tps: Vec<(u64, u64, u64, u64)> = s.iter().map(|p| (p.tp, p.dp, p.ep, p.pp)).collect();
        assert_eq!(
            tps,
            vec![
                (1, 1, 1, 1),
                (2, 1, 1, 1),
                (4, 1, 1, 1),
                (8, 1, 1, 1),
                (8, 1, 1, 2),
                (8, 1, 1, 4)
            ]
        );
    }

    #[test]
    fn a_moe_gets_attention_dp_and_expert_parallel_shapes_within_a_node() {
        let m = model("deepseek-ai__DeepSeek-R1");
        let s = shapes(&m, 8, 16);
        // Every shape's TP stays inside a node and its GPUs are a power of two up to 16.
        for p in &s {
            assert!(p.tp <= 8, "{p:?}");
            assert!(p.gpus().is_power_of_two() && p.gpus() <= 16, "{p:?}");
            assert!(p.ep == 1 || p.ep == p.moe_gpus(), "{p:?}");
        }
        assert!(s.contains(&Parallel {
            tp: 1,
            dp: 16,
            ep: 16,
            ..Parallel::default()
        }));
        assert!(s.contains(&Parallel {
            tp: 8,
            pp: 2,
            ..Parallel::default()
        }));
        // No duplicates.
        for (i, p) in s.iter().enumerate() {
            assert!(!s[..i].contains(p), "{p:?} twice");
        }
    }

    #[test]
    fn ratios_are_in_lowest_terms_and_within_the_gpus() {
        let r = ratios(8, 8, 40);
        assert!(r.contains(&(1, 1)) && r.contains(&(1, 4)) && r.contains(&(3, 2)));
        assert!(!r.contains(&(2, 2)) && !r.contains(&(2, 4)));
        for (x, y) in &r {
            assert!(8 * x + 8 * y <= 40);
        }
    }
}
