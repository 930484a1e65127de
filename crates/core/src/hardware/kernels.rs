//! vLLM's own kernels as measured on six GPUs, in a compact form: the time of one GEMM, one
//! decode or prefill attention call, one all-reduce and one fused-MoE call at any shape.
//!
//! Source: NVIDIA AIConfigurator's performance database (Apache-2.0), copied unchanged to
//! `tests/fixtures/measured_kernels/<gpu>/vllm-<version>/` (its `SOURCES.md`): CUDA-graph
//! replay timings of vLLM's kernels, one vLLM version per GPU (A100 SXM and L40S: 0.14.0; H100
//! SXM, H200 SXM, B200, RTX PRO 6000 Server: 0.19.0). `data/kernels.csv` holds the compact form
//! `tests/kernel_tables.rs` makes from those tables (`cargo test --test kernel_tables --
//! --ignored regenerate`) and checks against every measured row.
//!
//! The compact form is an **efficiency against the roofline of the measured GPU**, sampled at
//! the measured grid's nodes and interpolated multilinearly in log2 of the shape:
//! `time = max(FLOPs / peak, bytes / bandwidth) / efficiency`, with the roofline of each
//! kernel class defined once here ([`gemm_roof`], [`decode_attention_roof`],
//! [`prefill_attention_roof`], [`moe_roof`]) and used by the generator and at run time alike.
//! Beyond the measured grid the efficiency is held at its edge, so the time follows the
//! roofline (the generation-attention grid is pruned at large batch × history: there the time
//! grows with the KV tokens read). All-reduce times are kept as measured (log µs against the
//! message size, per GPU count; CUDA-graph backend). The fused MoE's efficiency is kept over
//! (tokens, bytes of one expert on the GPU), from the rows without expert parallelism; under
//! expert parallelism of degree `ep` a call takes `a + (1 − a)/ep` of that time, `a` (per
//! token count) the median over the measured EP rows (most of the work does not shrink with
//! `ep` at small batches; the MXFP4 kernel does not shrink at all).
//!
//! A GPU without tables borrows the efficiencies of its architecture's measured sibling
//! ([`kernels_for`]: Hopper parts the H100 SXM's, data-centre Blackwell the B200's, Ampere the
//! A100's, Ada the L40S's, client Blackwell the RTX PRO 6000's) applied to its own roofline;
//! the simulator says so in a note. Anything else (AMD, Intel, TPUs, Apple) has none and keeps
//! the fitted roofline of `core::perf`.
//!
//! One table is replaced, not used: the H200's context-attention rows imply up to 70 PFLOP/s
//! (a 16,384-token prompt of 32 heads in 30 µs), impossible on a 989 TFLOP/s chip, so the
//! H200 (the H100's die with more memory bandwidth) takes the H100's prefill-attention
//! efficiencies (`tests/kernel_tables.rs` finds and reports the rows that break the peak).

use crate::hardware::accelerator::{Accelerator, Architecture};
use std::sync::OnceLock;

/// The compact tables (`data/kernels.csv`).
const KERNELS_CSV: &str = include_str!("../../../../data/kernels.csv");

/// Scale of the stored integers: `round(ln(value) × SCALE)` (steps of 1.6%).
pub const SCALE: f64 = 64.0;

/// GEMM precisions measured (`gemm_dtype` of the tables).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GemmDtype {
    /// bf16 × bf16.
    Bf16,
    /// FP8 weights and activations, per-tensor scales.
    Fp8,
    /// FP8 with 128 × 128 block scales (DeepSeek-style, `weight_block_size`).
    Fp8Block,
    /// NVFP4 weights and activations (16-element blocks).
    Nvfp4,
}

impl GemmDtype {
    /// The name the tables and the compact file use.
    pub fn id(self) -> &'static str {
        match self {
            GemmDtype::Bf16 => "bfloat16",
            GemmDtype::Fp8 => "fp8",
            GemmDtype::Fp8Block => "fp8_block",
            GemmDtype::Nvfp4 => "nvfp4",
        }
    }

    /// Bytes per weight element, scales included.
    pub fn weight_bytes(self) -> f64 {
        match self {
            GemmDtype::Bf16 => 2.0,
            GemmDtype::Fp8 | GemmDtype::Fp8Block => 1.0,
            GemmDtype::Nvfp4 => 0.5 + 1.0 / 16.0,
        }
    }

    /// Every precision.
    pub const ALL: [GemmDtype; 4] = [
        GemmDtype::Bf16,
        GemmDtype::Fp8,
        GemmDtype::Fp8Block,
        GemmDtype::Nvfp4,
    ];
}

/// Fused-MoE precisions measured (`moe_dtype` of the tables).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MoeDtype {
    /// bf16 experts (Triton fused MoE).
    Bf16,
    /// FP8 experts, per-tensor scales.
    Fp8,
    /// FP8 experts with 128 × 128 block scales.
    Fp8Block,
    /// NVFP4 experts (FlashInfer TRT-LLM kernel).
    Nvfp4,
    /// INT4 weights, 16-bit activations (Marlin; Kimi-K2's compressed-tensors checkpoints).
    Int4W4A16,
    /// MXFP4 weights, 16-bit activations (gpt-oss).
    Mxfp4W4A16,
}

impl MoeDtype {
    /// The name the tables and the compact file use.
    pub fn id(self) -> &'static str {
        match self {
            MoeDtype::Bf16 => "bfloat16",
            MoeDtype::Fp8 => "fp8",
            MoeDtype::Fp8Block => "fp8_block",
            MoeDtype::Nvfp4 => "nvfp4",
            MoeDtype::Int4W4A16 => "int4_wo",
            MoeDtype::Mxfp4W4A16 => "w4a16_mxfp4",
        }
    }

    /// Bytes per expert weight element, scales included.
    pub fn weight_bytes(self) -> f64 {
        match self {
            MoeDtype::Bf16 => 2.0,
            MoeDtype::Fp8 | MoeDtype::Fp8Block => 1.0,
            MoeDtype::Nvfp4 => 0.5 + 1.0 / 16.0,
            MoeDtype::Int4W4A16 => 0.5 + 2.0 / 128.0,
            MoeDtype::Mxfp4W4A16 => 0.5 + 1.0 / 32.0,
        }
    }

    /// Whether the experts multiply in 16 bits (weight-only quantization).
    fn sixteen_bit_compute(self) -> bool {
        matches!(
            self,
            MoeDtype::Bf16 | MoeDtype::Int4W4A16 | MoeDtype::Mxfp4W4A16
        )
    }

    /// Every precision.
    pub const ALL: [MoeDtype; 6] = [
        MoeDtype::Bf16,
        MoeDtype::Fp8,
        MoeDtype::Fp8Block,
        MoeDtype::Nvfp4,
        MoeDtype::Int4W4A16,
        MoeDtype::Mxfp4W4A16,
    ];
}

/// A roofline: dense peaks (FLOP/s; `None` where the chip has no such unit) and memory
/// bandwidth (B/s).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Roof {
    /// 16-bit dense peak.
    pub bf16: f64,
    /// FP8 dense peak.
    pub fp8: Option<f64>,
    /// FP4 dense peak.
    pub fp4: Option<f64>,
    /// DRAM bandwidth.
    pub bw: f64,
}

impl Roof {
    /// The roofline of a catalog accelerator (`None` without a 16-bit peak or a bandwidth).
    pub fn of(gpu: &Accelerator) -> Option<Roof> {
        use crate::base::dtype::Dtype;
        let f = |d: Dtype| gpu.peak_flops(d).map(|p| p.0).filter(|p| *p > 0.0);
        let bf16 = f(Dtype::Bf16).or_else(|| f(Dtype::Fp16))?;
        let bw = gpu.bandwidth.0;
        (bw > 0.0).then_some(Roof {
            bf16,
            fp8: f(Dtype::Fp8),
            fp4: f(Dtype::Fp4),
            bw,
        })
    }

    /// The peak a GEMM of `d` runs at (FP8 and FP4 fall back to the next wider unit the chip
    /// has: vLLM then runs them as weight-only kernels).
    pub fn gemm_peak(&self, d: GemmDtype) -> f64 {
        match d {
            GemmDtype::Bf16 => self.bf16,
            GemmDtype::Fp8 | GemmDtype::Fp8Block => self.fp8.unwrap_or(self.bf16),
            GemmDtype::Nvfp4 => self.fp4.or(self.fp8).unwrap_or(self.bf16),
        }
    }

    /// The peak a fused MoE of `d` runs at.
    pub fn moe_peak(&self, d: MoeDtype) -> f64 {
        match d {
            d if d.sixteen_bit_compute() => self.bf16,
            MoeDtype::Nvfp4 => self.fp4.or(self.fp8).unwrap_or(self.bf16),
            _ => self.fp8.unwrap_or(self.bf16),
        }
    }
}

/// Roofline time of an `m × k` by `k × n` GEMM, seconds: FLOPs `2mnk`; bytes the weights, the
/// 16-bit input and output.
pub fn gemm_roof(r: &Roof, m: f64, n: f64, k: f64, d: GemmDtype) -> f64 {
    let flops = 2.0 * m * n * k;
    let bytes = n * k * d.weight_bytes() + 2.0 * (m * k + m * n);
    (flops / r.gemm_peak(d)).max(bytes / r.bw)
}

/// Roofline time of one decode-attention call, seconds: `b` queries, each reading `keys` keys
/// of `kv_heads` heads of `head_dim` (K and V at `kv_bytes`), `heads` query heads.
pub fn decode_attention_roof(
    r: &Roof,
    b: f64,
    keys: f64,
    (heads, kv_heads, head_dim): (f64, f64, f64),
    kv_bytes: f64,
) -> f64 {
    let flops = 4.0 * b * heads * keys * head_dim;
    let bytes = b * keys * kv_heads * head_dim * 2.0 * kv_bytes + 4.0 * b * heads * head_dim;
    (flops / r.bf16).max(bytes / r.bw)
}

/// Roofline time of one prefill-attention call, seconds: `pairs` (query, key) pairs in all,
/// `tokens` new tokens (their q, k, v and output in 16 bits).
pub fn prefill_attention_roof(
    r: &Roof,
    pairs: f64,
    tokens: f64,
    (heads, kv_heads, head_dim): (f64, f64, f64),
) -> f64 {
    let flops = 4.0 * heads * head_dim * pairs;
    let bytes = tokens * (2.0 * heads + 2.0 * kv_heads) * head_dim * 2.0;
    (flops / r.bf16).max(bytes / r.bw)
}

/// The shape of one fused-MoE call on one GPU.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MoeShape {
    /// Tokens entering the layer.
    pub tokens: f64,
    /// Hidden size.
    pub hidden: f64,
    /// Expert intermediate size on this GPU (`moe_intermediate_size / moe_tp`).
    pub inter: f64,
    /// Experts each token is routed to.
    pub top_k: f64,
    /// Experts in the model.
    pub experts: f64,
    /// Expert-parallel degree (experts on this GPU: `experts / ep`).
    pub ep: f64,
    /// How tokens spread over the experts.
    pub routing: Routing,
}

/// How a fused-MoE call's tokens spread over the experts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Routing {
    /// As evenly as possible (the tables' `balanced` rows): `min(E, T·k)` experts active.
    Balanced,
    /// Each token's experts drawn uniformly (a served model's router on varied text): the
    /// expected distinct experts, `E·(1 − (1 − k/E)^T)`.
    Uniform,
}

impl MoeShape {
    /// Bytes of one expert's three matrices on this GPU.
    pub fn expert_bytes(&self, d: MoeDtype) -> f64 {
        3.0 * self.hidden * self.inter * d.weight_bytes()
    }

    /// The experts at least one of the call's tokens reaches ([`Routing`]).
    pub fn active_experts(&self) -> f64 {
        match self.routing {
            Routing::Balanced => self.experts.min((self.tokens * self.top_k).ceil()),
            Routing::Uniform => {
                let p = (self.top_k / self.experts.max(1.0)).min(1.0);
                self.experts * (1.0 - (1.0 - p).powf(self.tokens.max(0.0)))
            }
        }
    }

    /// Roofline time of the call without expert parallelism, seconds: the experts at least one
    /// token reaches ([`Routing`]) read once, or the routed FLOPs, whichever is longer.
    pub fn roof(&self, r: &Roof, d: MoeDtype) -> f64 {
        let bytes = self.active_experts() * self.expert_bytes(d);
        let flops = 6.0 * self.hidden * self.inter * self.tokens * self.top_k;
        (bytes / r.bw).max(flops / r.moe_peak(d))
    }
}

/// A table sampled at grid nodes: `axes` (log2 coordinates, ascending) and one value per node
/// (row-major, last axis fastest), interpolated multilinearly and held at the edges.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// Node coordinates per axis.
    pub axes: Vec<Vec<f64>>,
    /// Values at the nodes.
    pub values: Vec<f64>,
}

impl Grid {
    /// The interpolated value at `x` (one coordinate per axis, log2 units).
    pub fn at(&self, x: &[f64]) -> f64 {
        let mut corners: Vec<(usize, f64)> = vec![(0, 1.0)];
        for (a, axis) in self.axes.iter().enumerate() {
            let v = x.get(a).copied().unwrap_or(0.0);
            let n = axis.len();
            let (i, f) = if n < 2 || !v.is_finite() || v <= axis[0] {
                (0, 0.0)
            } else if v >= axis[n - 1] {
                (n - 2, 1.0)
            } else {
                let i = axis
                    .partition_point(|c| *c <= v)
                    .saturating_sub(1)
                    .min(n - 2);
                (i, (v - axis[i]) / (axis[i + 1] - axis[i]))
            };
            let mut next = Vec::with_capacity(corners.len() * 2);
            for (idx, w) in corners {
                if n < 2 {
                    next.push((idx * n.max(1), w));
                } else {
                    next.push((idx * n + i, w * (1.0 - f)));
                    next.push((idx * n + i + 1, w * f));
                }
            }
            corners = next;
        }
        corners
            .iter()
            .map(|(i, w)| w * self.values.get(*i).copied().unwrap_or(0.0))
            .sum()
    }
}

/// The compact tables of one measured GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuKernels {
    /// The tables' GPU name (`h100_sxm`, …).
    pub table: String,
    /// The vLLM version measured.
    pub vllm: String,
    /// The roofline the efficiencies are relative to (the measured GPU's catalog figures).
    pub roof: Roof,
    /// ln(efficiency) of GEMMs over (log2 m, log2 n, log2 k), per precision.
    pub gemm: Vec<(GemmDtype, Grid)>,
    /// ln(efficiency) of decode attention over (log2 batch, log2 keys, log2 kv heads), per
    /// (head_dim, FP8 KV).
    pub decode: Vec<((u64, bool), Grid)>,
    /// ln(efficiency) of prefill attention over (log2 batch, log2 prompt, log2 heads), per
    /// (head_dim, FP8 KV).
    pub prefill: Vec<((u64, bool), Grid)>,
    /// ln(µs) of the CUDA-graph all-reduce over log2 message bytes, per GPU count.
    pub allreduce: Vec<(u64, Grid)>,
    /// ln(efficiency) of the fused MoE without expert parallelism over (log2 tokens, log2
    /// bytes of one expert on this GPU), per precision.
    pub moe: Vec<(MoeDtype, Grid)>,
    /// ln(a) over log2 tokens, per precision: under expert parallelism of degree `ep` the call
    /// takes `a + (1 − a)/ep` of its time without (the share of the work that every rank does
    /// whatever its experts: routing, permutation, the token slots).
    pub moe_ep: Vec<(MoeDtype, Grid)>,
}

/// Whether a table entry at `key` is the closest measured head_dim/KV precision to `want`.
fn nearest<T>(v: &[((u64, bool), T)], head_dim: u64, fp8: bool) -> Option<&T> {
    v.iter()
        .min_by_key(|((d, f), _)| (d.abs_diff(head_dim), *f != fp8))
        .map(|(_, g)| g)
}

fn log2(x: f64) -> f64 {
    x.max(1e-30).log2()
}

impl GpuKernels {
    /// Seconds of one GEMM on roofline `r`; `None` when the precision was not measured here.
    pub fn gemm_s(&self, r: &Roof, m: f64, n: f64, k: f64, d: GemmDtype) -> Option<f64> {
        let g = &self.gemm.iter().find(|(x, _)| *x == d)?.1;
        let eff = g.at(&[log2(m), log2(n), log2(k)]).exp();
        Some(gemm_roof(r, m, n, k, d) / eff)
    }

    /// Seconds of one decode-attention call (`b` queries reading `keys` keys each on average).
    pub fn decode_attention_s(
        &self,
        r: &Roof,
        b: f64,
        keys: f64,
        heads: (f64, f64, f64),
        kv_fp8: bool,
    ) -> Option<f64> {
        let g = nearest(&self.decode, heads.2 as u64, kv_fp8)?;
        let eff = g.at(&[log2(b), log2(keys), log2(heads.1)]).exp();
        let kvb = if kv_fp8 { 1.0 } else { 2.0 };
        Some(decode_attention_roof(r, b, keys, heads, kvb) / eff)
    }

    /// Seconds of one prefill-attention call over `chunks` prompt chunks of `tokens` tokens in
    /// all and `pairs` (query, key) pairs.
    pub fn prefill_attention_s(
        &self,
        r: &Roof,
        chunks: f64,
        tokens: f64,
        pairs: f64,
        heads: (f64, f64, f64),
        kv_fp8: bool,
    ) -> Option<f64> {
        let g = nearest(&self.prefill, heads.2 as u64, kv_fp8)?;
        let len = tokens / chunks.max(1.0);
        let eff = g.at(&[log2(chunks), log2(len), log2(heads.0)]).exp();
        Some(prefill_attention_roof(r, pairs, tokens, heads) / eff)
    }

    /// Seconds of one all-reduce of `bytes` over `gpus` GPUs (the nearest measured count at
    /// or above; `None` above 8).
    pub fn allreduce_s(&self, bytes: f64, gpus: u64) -> Option<f64> {
        if gpus <= 1 {
            return Some(0.0);
        }
        let g = self
            .allreduce
            .iter()
            .filter(|(n, _)| *n >= gpus)
            .min_by_key(|(n, _)| *n)?;
        Some(g.1.at(&[log2(bytes)]).exp() * 1e-6)
    }

    /// Seconds of one fused-MoE call.
    pub fn moe_s(&self, r: &Roof, s: &MoeShape, d: MoeDtype) -> Option<f64> {
        let g = &self.moe.iter().find(|(x, _)| *x == d)?.1;
        let lt = log2(s.tokens);
        let eff = g.at(&[lt, log2(s.expert_bytes(d))]).exp();
        let one = s.roof(r, d) / eff;
        if s.ep <= 1.0 {
            return Some(one);
        }
        let a = self
            .moe_ep
            .iter()
            .find(|(x, _)| *x == d)
            .map_or(0.0, |(_, g)| g.at(&[lt]).exp().min(1.0));
        Some(one * (a + (1.0 - a) / s.ep))
    }
}

/// Why a GPU's kernel times come from where they do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelSource {
    /// Its own measured tables.
    Measured,
    /// The efficiencies of a measured sibling of its architecture, on its own roofline.
    Sibling,
}

/// The measured GPUs by catalog id, and the sibling an architecture borrows.
const MEASURED: [(&str, &str); 6] = [
    ("h100-sxm", "h100_sxm"),
    ("h200-sxm", "h200_sxm"),
    ("b200", "b200_sxm"),
    ("a100-sxm-80gb", "a100_sxm"),
    ("l40s", "l40s"),
    ("rtx-pro-6000-server", "rtx_pro_6000_server"),
];

/// The display name of a measured GPU's tables (`h100_sxm` → `H100 SXM`).
pub fn table_name(table: &str) -> &str {
    match table {
        "h100_sxm" => "H100 SXM",
        "h200_sxm" => "H200 SXM",
        "b200_sxm" => "B200",
        "a100_sxm" => "A100 SXM",
        "l40s" => "L40S",
        "rtx_pro_6000_server" => "RTX PRO 6000 Server",
        other => other,
    }
}

/// Client Blackwell parts (compute capability 12.0), which borrow the RTX PRO 6000's tables
/// rather than the B200's.
const CLIENT_BLACKWELL: [&str; 2] = ["rtx-5090", "rtx-pro-6000-ws"];

/// Every measured GPU's tables, parsed once from `data/kernels.csv`.
pub fn all_kernels() -> &'static [GpuKernels] {
    static ALL: OnceLock<Vec<GpuKernels>> = OnceLock::new();
    ALL.get_or_init(|| parse(KERNELS_CSV).unwrap_or_default())
}

/// The kernel tables for `gpu` and whether they are its own or a sibling's; `None` for a
/// custom accelerator and for vendors and architectures without a measured sibling.
pub fn kernels_for(gpu: &Accelerator) -> Option<(&'static GpuKernels, KernelSource)> {
    if gpu.is_custom() {
        return None;
    }
    let by_table = |t: &str| all_kernels().iter().find(|k| k.table == t);
    if let Some((_, t)) = MEASURED.iter().find(|(id, _)| *id == gpu.id) {
        return by_table(t).map(|k| (k, KernelSource::Measured));
    }
    let sibling = match gpu.architecture {
        Architecture::Hopper => "h100_sxm",
        Architecture::Blackwell if CLIENT_BLACKWELL.contains(&gpu.id.as_str()) => {
            "rtx_pro_6000_server"
        }
        Architecture::Blackwell => "b200_sxm",
        Architecture::Ampere => "a100_sxm",
        Architecture::Ada => "l40s",
        _ => return None,
    };
    by_table(sibling).map(|k| (k, KernelSource::Sibling))
}

/// An error reading the compact file: its line and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub what: String,
}

fn parse_axes(s: &str) -> Option<Vec<Vec<f64>>> {
    s.split('|')
        .map(|a| {
            let (_, nodes) = a.split_once(':')?;
            nodes
                .split(' ')
                .map(|v| v.parse::<f64>().ok())
                .collect::<Option<Vec<f64>>>()
        })
        .collect()
}

fn parse_values(s: &str, scale: f64) -> Option<Vec<f64>> {
    s.split(' ')
        .map(|v| v.parse::<f64>().ok().map(|x| x / scale))
        .collect()
}

/// Reads the compact file (`data/kernels.csv`): `table,vllm,kind,key,axes,values` lines, `#`
/// comments. `kind` is `roof` (key empty; values `bf16 fp8 fp4 bw` in TFLOP/s and GB/s, `-`
/// for none), `gemm` (key a [`GemmDtype`] id), `decode`/`prefill` (key `d<head_dim>_<kv>`,
/// kv `bf16` or `fp8`), `allreduce` (key the GPU count), `moe` or `moe_ep` (key a [`MoeDtype`]
/// id).
pub fn parse(text: &str) -> Result<Vec<GpuKernels>, ParseError> {
    let mut out: Vec<GpuKernels> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        let err = |what: &str| ParseError {
            line: line_no,
            what: what.to_string(),
        };
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = t.split(',').collect();
        let [table, vllm, kind, key, axes, values] = f.as_slice() else {
            return Err(err("expected 6 comma-separated fields"));
        };
        if *kind == "roof" {
            let v: Vec<Option<f64>> = values.split(' ').map(|x| x.parse().ok()).collect();
            let (Some(Some(bf16)), Some(bw)) = (v.first(), v.get(3).copied().flatten()) else {
                return Err(err("roof needs bf16 and bandwidth"));
            };
            out.push(GpuKernels {
                table: table.to_string(),
                vllm: vllm.to_string(),
                roof: Roof {
                    bf16: bf16 * 1e12,
                    fp8: v.get(1).copied().flatten().map(|x| x * 1e12),
                    fp4: v.get(2).copied().flatten().map(|x| x * 1e12),
                    bw: bw * 1e9,
                },
                gemm: vec![],
                decode: vec![],
                prefill: vec![],
                allreduce: vec![],
                moe: vec![],
                moe_ep: vec![],
            });
            continue;
        }
        let g = out
            .iter_mut()
            .rev()
            .find(|g| g.table == *table)
            .ok_or_else(|| err("table before its roof line"))?;
        let grid = || -> Result<Grid, ParseError> {
            let axes = parse_axes(axes).ok_or_else(|| err("bad axes"))?;
            let mut values = parse_values(values, SCALE).ok_or_else(|| err("bad values"))?;
            // Each value is stored as its difference from the node before it along the last
            // axis.
            let run = axes.last().map_or(1, Vec::len).max(1);
            for i in 1..values.len() {
                if i % run != 0 {
                    values[i] += values[i - 1];
                }
            }
            let n: usize = axes.iter().map(Vec::len).product();
            if n != values.len() || axes.iter().any(|a| a.windows(2).any(|w| w[0] >= w[1])) {
                return Err(err(
                    "values do not fill the axes, or an axis is not ascending",
                ));
            }
            Ok(Grid { axes, values })
        };
        let head_key = || -> Result<(u64, bool), ParseError> {
            let (d, kv) = key
                .strip_prefix('d')
                .and_then(|k| k.split_once('_'))
                .ok_or_else(|| err("bad attention key"))?;
            let d = d.parse().map_err(|_| err("bad head_dim"))?;
            Ok((d, kv == "fp8"))
        };
        match *kind {
            "gemm" => {
                let d = GemmDtype::ALL
                    .into_iter()
                    .find(|d| d.id() == *key)
                    .ok_or_else(|| err("unknown GEMM precision"))?;
                let gr = grid()?;
                g.gemm.push((d, gr));
            }
            "decode" => {
                let k = head_key()?;
                let gr = grid()?;
                g.decode.push((k, gr));
            }
            "prefill" => {
                let k = head_key()?;
                let gr = grid()?;
                g.prefill.push((k, gr));
            }
            "allreduce" => {
                let n = key.parse().map_err(|_| err("bad GPU count"))?;
                let gr = grid()?;
                g.allreduce.push((n, gr));
            }
            "moe" | "moe_ep" => {
                let d = MoeDtype::ALL
                    .into_iter()
                    .find(|d| d.id() == *key)
                    .ok_or_else(|| err("unknown MoE precision"))?;
                let gr = grid()?;
                if *kind == "moe" {
                    g.moe.push((d, gr));
                } else {
                    g.moe_ep.push((d, gr));
                }
            }
            _ => return Err(err("unknown kind")),
        }
    }
    Ok(out)
}
