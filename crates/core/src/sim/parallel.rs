//! How one engine instance spreads a model over its GPUs, in one spelling for every engine
//! ([`Parallel`]): `tp` attention tensor parallelism inside each attention data-parallel
//! rank, `dp` attention data-parallel ranks, `ep` the MoE layers' expert-parallel size,
//! `pp` pipeline stages, `nodes` the nodes the GPUs are on. The instance holds
//! `tp × dp × pp` GPUs; the MoE layers of each stage run over all `tp × dp` of its GPUs,
//! experts split `ep` ways and each expert's intermediate size `moe_tp = tp·dp / ep` ways.
//!
//! What each does (`docs/SERVING_SIMULATOR.md`, "Parallelism"):
//! - **Memory per GPU.** Attention and dense layers are split `tp` ways and replicated over
//!   the DP ranks; the routed experts are split over all `tp × dp` GPUs; a pipeline stage
//!   holds its share of the layers ([`Parallel::weights_per_gpu`]). The KV cache of a DP
//!   rank holds that rank's requests only, its heads split `tp` ways, its layers `pp` ways.
//! - **The step.** Each DP rank schedules its own requests; the ranks meet in every MoE
//!   layer, which runs on the tokens of all of them (`dp ×` a rank's tokens under the
//!   symmetric load below), after an all-gather and before a reduce-scatter of those tokens'
//!   activations over the `tp × dp` GPUs (an all-reduce's two halves: timed as one all-reduce
//!   of the gathered bytes). Inside a rank, tensor parallelism's all-reduces. With pipeline
//!   stages, a step's batch passes the stages one after the other (the slowest stage, of
//!   `⌈L/pp⌉` layers, paces them) and crosses `pp − 1` boundaries; `pp` batches are in
//!   flight at once.
//! - **Communication** crosses the NVLink domain where the group fits in it (the measured
//!   all-reduce tables up to 8 GPUs), else InfiniBand/RoCE at
//!   [`INTER_NODE_PER_DIRECTION_GBPS`] per GPU: an all-reduce over `n` GPUs on `m` nodes takes
//!   the in-node all-reduce plus `2(m−1)/m` of its bytes per node's GPUs over the NICs.
//!
//! **The simulated unit.** The DP ranks and the batches in flight of a pipeline are
//! symmetric under the benchmark's load (each rank gets every `dp`-th request; vLLM, SGLang
//! and TensorRT-LLM dispatch round-robin by default), so the simulator runs one unit, a DP
//! rank's share of one pipeline slot, with `1/(dp × pp)` of the clients or of the rate, and
//! scales the throughputs back ([`Parallel::units`]). Imbalance between ranks is not
//! modelled (stated in the method page).

use crate::base::error::{CalcError, Phrase};
use crate::base::units::Bytes;
use crate::calc::tp::check_model;
use crate::calc::weights::quantized_bytes;
use crate::hardware::interconnect::INTER_NODE_PER_DIRECTION_GBPS;
use crate::hardware::Accelerator;
use crate::model::{Ffn, ModelDesc, WeightFormat};
use crate::sim::engines::EngineKind;
use serde::{Deserialize, Serialize};

/// Largest size of any one degree accepted.
pub const MAX_DEGREE: u64 = 1024;

/// The start-up latency of one collective or transfer across nodes, seconds (one NIC round:
/// 10 µs).
pub const INTER_NODE_LATENCY_S: f64 = 10e-6;

/// One engine instance's parallelism (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Parallel {
    /// Attention tensor parallelism inside each DP rank.
    pub tp: u64,
    /// Attention data-parallel ranks.
    pub dp: u64,
    /// MoE expert-parallel size (divides `tp × dp`).
    pub ep: u64,
    /// Pipeline stages.
    pub pp: u64,
    /// Nodes the `tp × dp × pp` GPUs are spread over (`0`: as few as the GPU's scale-up
    /// domain allows).
    pub nodes: u64,
}

impl Default for Parallel {
    fn default() -> Self {
        Parallel {
            tp: 1,
            dp: 1,
            ep: 1,
            pp: 1,
            nodes: 0,
        }
    }
}

impl Parallel {
    /// GPUs of the instance.
    pub fn gpus(&self) -> u64 {
        self.tp.saturating_mul(self.dp).saturating_mul(self.pp)
    }

    /// GPUs one MoE layer runs over (one stage's).
    pub fn moe_gpus(&self) -> u64 {
        self.tp.saturating_mul(self.dp)
    }

    /// Each expert's intermediate size is split this many ways.
    pub fn moe_tp(&self) -> u64 {
        self.moe_gpus() / self.ep.max(1)
    }

    /// The symmetric units the simulator runs one of (module docs): `dp × pp`.
    pub fn units(&self) -> u64 {
        self.dp.saturating_mul(self.pp).max(1)
    }

    /// The units that have work when at most `clients` requests are in flight: one client
    /// keeps one unit busy, so fewer clients than units leave units idle.
    pub fn busy_units(&self, clients: u64) -> u64 {
        self.units().min(clients).max(1)
    }

    /// The attention-DP ranks whose tokens meet in each MoE layer when at most `clients`
    /// requests are in flight (`None`: no cap, every rank).
    pub fn busy_ranks(&self, clients: Option<u64>) -> u64 {
        clients.map_or(self.dp, |c| self.dp.min(c))
    }

    /// GPUs of one node: the GPU's scale-up domain (8 on an HGX board, 72 on an NVL72 rack),
    /// at least 1.
    pub fn node_size(gpu: &Accelerator) -> u64 {
        u64::from(gpu.interconnect.domain_size).max(1)
    }

    /// The nodes in use: as given, or the fewest that hold the GPUs.
    pub fn nodes_for(&self, gpu: &Accelerator) -> u64 {
        if self.nodes > 0 {
            self.nodes
        } else {
            self.gpus().div_ceil(Parallel::node_size(gpu)).max(1)
        }
    }

    /// Checks the shape against the model, the GPU's nodes and the engine's own rules; the
    /// first rule broken, in one sentence.
    pub fn check(
        &self,
        model: &ModelDesc,
        gpu: &Accelerator,
        engine: EngineKind,
    ) -> Result<(), CalcError> {
        for (field, v) in [
            ("tp", self.tp),
            ("dp", self.dp),
            ("ep", self.ep),
            ("pp", self.pp),
        ] {
            CalcError::whole_in(Phrase::verbatim(field), v, (1, MAX_DEGREE))?;
        }
        CalcError::whole_in(Phrase::verbatim("nodes"), self.nodes, (0, MAX_DEGREE))?;
        check_model(model, self.tp)?;
        let g = self.moe_gpus();
        if !g.is_multiple_of(self.ep) {
            return Err(CalcError::range_error(
                Phrase::verbatim("ep"),
                self.ep,
                Phrase::tr("rng_par_ep_divides").val("g", g),
            ));
        }
        let experts = routed_experts(model);
        if self.ep > 1 {
            match experts {
                None => {
                    return Err(CalcError::range_error(
                        Phrase::verbatim("ep"),
                        self.ep,
                        Phrase::tr("rng_par_ep_dense"),
                    ))
                }
                Some(e) if !e.is_multiple_of(self.ep) => {
                    return Err(CalcError::range_error(
                        Phrase::verbatim("ep"),
                        self.ep,
                        Phrase::tr("rng_par_ep_experts").val("e", e),
                    ))
                }
                _ => {}
            }
        }
        let layers = model.layers.len() as u64;
        if self.pp > layers.max(1) {
            return Err(CalcError::range_error(
                Phrase::verbatim("pp"),
                self.pp,
                Phrase::tr("rng_par_pp_layers").val("l", layers),
            ));
        }
        let per_node = Parallel::node_size(gpu);
        let nodes = self.nodes_for(gpu);
        if nodes > self.gpus() || self.gpus() > nodes.saturating_mul(per_node) {
            return Err(CalcError::range_error(
                Phrase::verbatim("nodes"),
                nodes,
                Phrase::tr("rng_par_nodes")
                    .val("g", self.gpus())
                    .val("n", per_node)
                    .val("min", self.gpus().div_ceil(per_node)),
            ));
        }
        match engine {
            EngineKind::Vllm if self.ep > 1 && self.ep != g => Err(CalcError::range_error(
                Phrase::verbatim("ep"),
                self.ep,
                Phrase::tr("rng_par_vllm_ep").val("g", g),
            )),
            EngineKind::Trtllm if self.dp > 1 && self.tp > 1 => Err(CalcError::range_error(
                Phrase::verbatim("tp"),
                self.tp,
                Phrase::tr("rng_par_trtllm_dp"),
            )),
            _ => Ok(()),
        }
    }

    /// The engine's own flags for this shape, as the result shows them: the launch command's
    /// flags ([`Parallel::launch_flags`]) for vLLM and SGLang, the LLM API's option names for
    /// TensorRT-LLM (whose command line has no flag for MoE-TP or attention DP), and the
    /// number of nodes.
    pub fn engine_flags(&self, engine: EngineKind) -> String {
        let mut f = match engine {
            EngineKind::Vllm | EngineKind::Sglang => self.launch_flags(engine),
            EngineKind::Trtllm => {
                let mut f = vec![format!("tensor_parallel_size={}", self.moe_gpus())];
                if self.pp > 1 {
                    f.push(format!("pipeline_parallel_size={}", self.pp));
                }
                f.push(format!("moe_expert_parallel_size={}", self.ep));
                f.push(format!("moe_tensor_parallel_size={}", self.moe_tp()));
                if self.dp > 1 {
                    f.push("enable_attention_dp=true".into());
                }
                f
            }
        };
        if self.nodes > 1 {
            f.push(format!("({} nodes)", self.nodes));
        }
        f.join(" ")
    }

    /// The parallelism flags of the engine's launch command (`vllm serve`,
    /// `python -m sglang.launch_server`, `trtllm-serve`), one home for
    /// [`Parallel::engine_flags`] and the planner's launch commands. TensorRT-LLM's attention
    /// DP is not a flag of `trtllm-serve` but a line of its options file.
    pub fn launch_flags(&self, engine: EngineKind) -> Vec<String> {
        let mut f = Vec::new();
        match engine {
            EngineKind::Vllm => {
                f.push(format!("--tensor-parallel-size {}", self.tp));
                if self.pp > 1 {
                    f.push(format!("--pipeline-parallel-size {}", self.pp));
                }
                if self.dp > 1 {
                    f.push(format!("--data-parallel-size {}", self.dp));
                }
                if self.ep > 1 {
                    f.push("--enable-expert-parallel".into());
                }
            }
            EngineKind::Sglang => {
                f.push(format!("--tp {}", self.moe_gpus()));
                if self.pp > 1 {
                    f.push(format!("--pp-size {}", self.pp));
                }
                if self.dp > 1 {
                    f.push(format!("--dp {} --enable-dp-attention", self.dp));
                }
                if self.ep > 1 {
                    f.push(format!("--ep-size {}", self.ep));
                }
            }
            EngineKind::Trtllm => {
                f.push(format!("--tp_size {}", self.moe_gpus()));
                if self.pp > 1 {
                    f.push(format!("--pp_size {}", self.pp));
                }
                if self.ep > 1 {
                    f.push(format!("--ep_size {}", self.ep));
                }
            }
        }
        f
    }

    /// The weights one GPU holds, from those it holds at tensor parallelism `tp` alone
    /// (`at_tp`, as `core::memory` lays them out): the routed experts spread over the `dp`
    /// ranks too, then every part over the `pp` stages.
    pub fn weights_per_gpu(&self, model: &ModelDesc, fmt: &WeightFormat, at_tp: Bytes) -> Bytes {
        let tp = self.tp.max(1) as f64;
        let e = routed_expert_bytes(model, fmt) as f64;
        let dp = self.dp.max(1) as f64;
        let moved = e / tp - e / (tp * dp);
        let w = (at_tp.0 as f64 - moved).max(0.0) / self.pp.max(1) as f64;
        Bytes(w.round() as u64)
    }

    /// Whether the shape goes beyond tensor parallelism inside one node (attention DP, EP,
    /// pipeline stages or a second node): the one test of when the step, the result and the
    /// page say anything of it.
    pub fn beyond_tp(&self, gpu: &Accelerator) -> bool {
        self.dp > 1 || self.ep > 1 || self.pp > 1 || self.nodes_for(gpu) > 1
    }

    /// GPUs of one node as the instance is laid out: its GPUs spread evenly over its nodes.
    pub fn per_node(&self, gpu: &Accelerator) -> u64 {
        self.gpus().div_ceil(self.nodes_for(gpu)).max(1)
    }

    /// Stage boundaries that leave a node (the stages laid out node after node).
    pub fn node_crossings(&self, gpu: &Accelerator) -> u64 {
        (self.nodes_for(gpu) - 1).min(self.pp.saturating_sub(1))
    }

    /// The slowest stage's share of the layers times the stages: `pp·⌈L/pp⌉ / L` (1 without
    /// pipeline parallelism or when the stages divide the layers).
    pub fn stage_factor(&self, layers: u64) -> f64 {
        if self.pp <= 1 || layers == 0 {
            return 1.0;
        }
        (self.pp * layers.div_ceil(self.pp)) as f64 / layers as f64
    }
}

/// Seconds of one all-reduce of `bytes` over `n` GPUs laid out `per_node` to a node, from
/// the measured in-node time `in_node(bytes, k)` over `k` GPUs: a group within one node is
/// the measured time; a group spread over `m` nodes adds the exchange of `2(m−1)/m` of the
/// bytes over the `k` NICs of a node, and the NICs' start-up twice.
pub fn allreduce_on(per_node: u64, bytes: f64, n: u64, in_node: &dyn Fn(f64, u64) -> f64) -> f64 {
    if n <= 1 || bytes <= 0.0 {
        return 0.0;
    }
    let per_node = per_node.max(1);
    if n <= per_node {
        return in_node(bytes, n);
    }
    let m = n.div_ceil(per_node) as f64;
    let bw = INTER_NODE_PER_DIRECTION_GBPS * 1e9 * per_node as f64;
    in_node(bytes, per_node) + 2.0 * (m - 1.0) / m * bytes / bw + 2.0 * INTER_NODE_LATENCY_S
}

/// Seconds of one pipeline hand-off of `bytes` between stages over a link of `bw` bytes/s
/// per direction inside a node (5 µs to start), or between nodes when `bw` is 0 (the NIC:
/// [`INTER_NODE_PER_DIRECTION_GBPS`], [`INTER_NODE_LATENCY_S`]).
pub fn p2p_s(bytes: f64, bw: f64) -> f64 {
    if bw > 0.0 {
        bytes / bw + 5e-6
    } else {
        bytes / (INTER_NODE_PER_DIRECTION_GBPS * 1e9) + INTER_NODE_LATENCY_S
    }
}

/// The routed experts of the model's MoE layers (the first MoE layer's count), if any.
pub fn routed_experts(model: &ModelDesc) -> Option<u64> {
    model.layers.iter().find_map(|l| match l.ffn {
        Ffn::Moe { experts, .. } => Some(experts),
        _ => None,
    })
}

/// Bytes of the routed experts' matrices of every MoE layer in format `fmt`.
pub fn routed_expert_bytes(model: &ModelDesc, fmt: &WeightFormat) -> u64 {
    let h = model.hidden_size;
    let elems: u64 = model
        .layers
        .iter()
        .map(|l| match l.ffn {
            Ffn::Moe {
                experts,
                expert_intermediate,
                gated,
                latent,
                ..
            } => {
                let width = latent.unwrap_or(h);
                let mats = if gated { 3 } else { 2 };
                experts
                    .saturating_mul(mats)
                    .saturating_mul(width)
                    .saturating_mul(expert_intermediate)
            }
            _ => 0,
        })
        .fold(0u64, u64::saturating_add);
    quantized_bytes(elems, fmt).unwrap_or(elems.saturating_mul(2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hardware::Catalog;
    use crate::model::{parse_model_text, preset};

    fn model(id: &str) -> ModelDesc {
        parse_model_text(preset(id).expect("preset").json()).expect("model")
    }

    fn par(tp: u64, dp: u64, ep: u64, pp: u64, nodes: u64) -> Parallel {
        Parallel {
            tp,
            dp,
            ep,
            pp,
            nodes,
        }
    }

    /// Each rule refuses the shape that breaks it with its own sentence, and accepts the
    /// shapes engines run.
    #[test]
    fn shapes_are_checked_rule_by_rule() {
        let ds = model("deepseek-ai__DeepSeek-R1");
        let llama = model("meta-llama__Meta-Llama-3.1-8B");
        let h200 = Catalog::builtin().get("h200-sxm").expect("gpu");
        let ok = |p: Parallel, m: &ModelDesc, e| p.check(m, h200, e);
        assert!(ok(par(8, 1, 8, 1, 0), &ds, EngineKind::Vllm).is_ok());
        assert!(ok(par(1, 8, 8, 1, 0), &ds, EngineKind::Trtllm).is_ok());
        assert!(ok(par(8, 2, 16, 1, 2), &ds, EngineKind::Sglang).is_ok());
        let msg = |r: Result<(), CalcError>| r.expect_err("refused").to_string();
        // 16 GPUs: two 8-GPU nodes when none are given, refused on one.
        assert!(ok(par(8, 2, 16, 1, 0), &ds, EngineKind::Sglang).is_ok());
        assert!(msg(ok(par(8, 2, 16, 1, 1), &ds, EngineKind::Sglang)).contains("nodes"));
        // EP that does not divide the GPUs or the experts; EP on a dense model.
        assert!(msg(ok(par(8, 1, 3, 1, 0), &ds, EngineKind::Sglang)).contains("ep"));
        assert!(msg(ok(par(1, 1, 2, 1, 0), &llama, EngineKind::Sglang)).contains("ep"));
        // vLLM's EP spans every GPU of a stage; TensorRT-LLM's attention DP has TP 1.
        assert!(msg(ok(par(8, 1, 4, 1, 0), &ds, EngineKind::Vllm)).contains("ep"));
        assert!(msg(ok(par(2, 4, 8, 1, 0), &ds, EngineKind::Trtllm)).contains("tp"));
        // More stages than layers; heads TP does not divide.
        assert!(msg(ok(par(1, 1, 1, 64, 0), &llama, EngineKind::Vllm)).contains("pp"));
        assert!(ok(par(3, 1, 1, 1, 0), &llama, EngineKind::Vllm).is_err());
    }

    /// Attention DP spreads the routed experts over more GPUs; pipeline stages split the
    /// rest; without either the weights are those of TP alone.
    #[test]
    fn weights_per_gpu_follow_the_shape() {
        let ds = model("deepseek-ai__DeepSeek-R1");
        let fmt = ds.weights.clone();
        // The routed experts' bytes from the config's own keys: 3 matrices of h × I per
        // expert in every layer after the dense ones, FP8 with the checkpoint's block scales.
        let cfg: serde_json::Value =
            serde_json::from_str(preset("deepseek-ai__DeepSeek-R1").expect("preset").json())
                .expect("json");
        let key = |k: &str| cfg[k].as_u64().unwrap_or_else(|| panic!("{k}"));
        let elems = (key("num_hidden_layers") - key("first_k_dense_replace"))
            * key("n_routed_experts")
            * 3
            * key("hidden_size")
            * key("moe_intermediate_size");
        let scales = fmt
            .group_size
            .map_or(0, |g| elems.div_ceil(g) * fmt.scale_bits / 8);
        assert_eq!(fmt.dtype.bits(), 8);
        let e = routed_expert_bytes(&ds, &fmt) as f64;
        assert_eq!(e, (elems + scales) as f64);
        // What one GPU would hold at TP 1 (any figure above the experts' bytes will do).
        let at_tp = Bytes(elems + scales + 10_000_000_000);
        assert_eq!(par(8, 1, 8, 1, 0).weights_per_gpu(&ds, &fmt, at_tp), at_tp);
        let dp = par(1, 8, 8, 1, 0).weights_per_gpu(&ds, &fmt, at_tp);
        assert!(
            (at_tp.0 as f64 - dp.0 as f64 - (e - e / 8.0)).abs() < 2.0,
            "{dp:?}"
        );
        let pp = par(8, 1, 1, 2, 0).weights_per_gpu(&ds, &fmt, at_tp);
        assert_eq!(pp, Bytes((at_tp.0 as f64 / 2.0).round() as u64));
    }

    /// Inside a node the measured time; across nodes the NICs' share is added and grows
    /// with the bytes.
    #[test]
    fn collectives_cross_nodes_over_the_nics() {
        let h200 = Catalog::builtin().get("h200-sxm").expect("gpu");
        let in_node = |b: f64, _n: u64| 1e-6 + b / 300e9;
        let (one, two) = (par(8, 1, 8, 1, 0), par(8, 2, 16, 1, 2));
        assert_eq!((one.per_node(h200), two.per_node(h200)), (8, 8));
        assert_eq!(allreduce_on(8, 1e6, 8, &in_node), in_node(1e6, 8));
        let across = allreduce_on(two.per_node(h200), 1e6, 16, &in_node);
        assert!(across > in_node(1e6, 8) + 1e6 / (8.0 * 50e9), "{across}");
        assert_eq!(allreduce_on(8, 1e6, 1, &in_node), 0.0);
        assert!(p2p_s(1e6, 0.0) > p2p_s(1e6, 450e9));
        assert_eq!(par(8, 1, 1, 2, 2).node_crossings(h200), 1);
        assert!((par(1, 1, 1, 2, 0).stage_factor(61) - 62.0 / 61.0).abs() < 1e-12);
    }

    /// Each engine's own spelling.
    #[test]
    fn engine_flags_name_each_engines_knobs() {
        let p = par(1, 8, 8, 1, 0);
        assert_eq!(
            p.engine_flags(EngineKind::Trtllm),
            "tensor_parallel_size=8 moe_expert_parallel_size=8 moe_tensor_parallel_size=1 enable_attention_dp=true"
        );
        assert_eq!(
            p.engine_flags(EngineKind::Sglang),
            "--tp 8 --dp 8 --enable-dp-attention --ep-size 8"
        );
        assert_eq!(
            p.engine_flags(EngineKind::Vllm),
            "--tensor-parallel-size 1 --data-parallel-size 8 --enable-expert-parallel"
        );
        // trtllm-serve's own flags: attention DP is an options-file line, not a flag.
        assert_eq!(
            p.launch_flags(EngineKind::Trtllm),
            ["--tp_size 8", "--ep_size 8"]
        );
        let staged = par(4, 1, 1, 2, 2);
        assert_eq!(
            staged.engine_flags(EngineKind::Vllm),
            format!(
                "{} (2 nodes)",
                staged.launch_flags(EngineKind::Vllm).join(" ")
            )
        );
    }
}
