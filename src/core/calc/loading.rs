//! Model loading and offloading: how long a replica takes to come up, and what decode would
//! cost if the weights (or the KV cache) lived in host memory instead of GPU memory.
//!
//! # Loading path (the chapter: disk → CPU memory → GPU memory, then resident)
//! Two stages, each `bytes / bandwidth`:
//! 1. **Storage → host memory**: the checkpoint is read once per node. With tensor parallelism
//!    the node still reads every byte (each rank reads its slices of the same files), so the
//!    storage stage moves the *whole* model; if `readers` replicas on the node load at the same
//!    time from the same device, they share its bandwidth (`readers × bytes`). Nodes that read
//!    from their own storage do not share (one reader each).
//! 2. **Host memory → GPU memory**: each GPU copies its own shard (`bytes / tp`) over its own
//!    host link in parallel: PCIe x16 per direction `2^(gen+1)` GB/s nominal (Gen4 32, Gen5 64,
//!    Gen6 128), or NVLink-C2C 450 GB/s per direction on Grace parts (GH200, GB200, GB300),
//!    times a documented efficiency ([`HOST_LINK_EFFICIENCY`]). Servers where two GPUs sit
//!    behind one PCIe switch share its uplink; enter a lower link figure for those.
//!
//! When the stages overlap (streamed loading: safetensors are memory-mapped and copied tensor by
//! tensor while the next is read), the load takes as long as the slowest stage,
//! `max(t_storage, t_link)` = model bytes / the slowest effective rate; without overlap the
//! stage times add. A new replica's cold start adds the engine's start-up
//! ([`ENGINE_STARTUP_S`]: process and CUDA/NCCL initialisation, `torch.compile`, CUDA-graph
//! capture, KV-cache allocation). Container image pulls are not included.
//!
//! # Offloading
//! Decode reads every weight once per step. If the weights lived in host memory they would
//! cross the host link on every step instead of streaming from HBM: the weight part of the step
//! time grows by `HBM × e_bw / (link × e_link)` (≈ 48× for an H100 SXM on PCIe Gen5). The same
//! holds for the KV cache read by attention. [`offload`] gives both next to the on-GPU figure.

use crate::core::base::derivation::{Derivation, Source, Term};
use crate::core::base::dtype::Dtype;
use crate::core::base::error::{CalcError, Phrase};
use crate::core::base::units::{fmt_sig, Bytes, BytesPerSecond, Seconds, MIB};
use crate::core::calc::perf::{self, Efficiencies, Workload};
use crate::core::hardware::catalog::Accelerator;
use crate::core::model::ModelDesc;
use serde::{Deserialize, Serialize};

/// Local NVMe SSD, PCIe Gen4 x4: ≈ 7 GB/s sequential read (datacenter and high-end client
/// drives, e.g. Samsung 990 PRO: 7,450 MB/s rated). A Gen5 drive reads ≈ 12–14 GB/s.
pub const NVME_GEN4_GBPS: f64 = 7.0;
/// Network block volume at its provisioned maximum: AWS EBS gp3 allows 125–1,000 MiB/s
/// (`Throughput` valid range in the EC2 API reference; newer regions allow up to 2,000 MiB/s),
/// so 1,000 MiB/s = 1.049 GB/s.
pub const NETWORK_VOLUME_BPS: f64 = 1000.0 * MIB as f64;
/// Network block volume at its baseline: EBS gp3 without provisioned throughput, 125 MiB/s
/// = 0.131 GB/s.
pub const NETWORK_VOLUME_BASELINE_BPS: f64 = 125.0 * MIB as f64;
/// Object storage (S3, GCS, the Hugging Face Hub) read by one loader process: ≈ 0.5 GB/s
/// (tens of parallel ranged GETs at ≈ 50–90 MB/s each; a single stream is far slower, and many
/// parallel streams on a 100 Gb/s instance can reach several GB/s). A rough, editable figure.
pub const OBJECT_STORAGE_GBPS: f64 = 0.5;
/// Fraction of the nominal host-link bandwidth a pinned-memory host→device copy reaches:
/// CUDA `bandwidthTest` / `nvbandwidth` report ≈ 25–26 GB/s on Gen4 x16 (of 32) and ≈ 50–55
/// GB/s on Gen5 x16 (of 64), so ≈ 0.8. Pageable memory is slower.
pub const HOST_LINK_EFFICIENCY: f64 = 0.8;
/// NVLink-C2C between Grace and the GPU (GH200, GB200, GB300): 900 GB/s bidirectional, so
/// 450 GB/s per direction (NVIDIA Grace Hopper datasheet).
pub const NVLINK_C2C_PER_DIRECTION_GBPS: f64 = 450.0;
/// Engine start-up after the weights are resident, seconds: process start, CUDA and NCCL
/// initialisation, `torch.compile` (tens of seconds without a warm compile cache, per vLLM's
/// torch.compile design notes), CUDA-graph capture (≈ 5–45 s; one public vLLM 0.25 report:
/// 43 s for 371 capture sizes), KV-cache allocation. A rough default for a cold vLLM start;
/// editable (a warm compile cache roughly halves it).
pub const ENGINE_STARTUP_S: f64 = 60.0;

/// Where the checkpoint is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Storage {
    /// Local NVMe SSD (PCIe Gen4): [`NVME_GEN4_GBPS`].
    LocalNvme,
    /// Network block volume at its provisioned maximum (EBS gp3 1,000 MiB/s).
    NetworkVolume,
    /// Network block volume at its baseline (EBS gp3 125 MiB/s).
    NetworkVolumeBaseline,
    /// Object storage read by one loader: [`OBJECT_STORAGE_GBPS`].
    ObjectStorage,
}

impl Storage {
    /// Every preset, fastest first.
    pub const ALL: &'static [Storage] = &[
        Storage::LocalNvme,
        Storage::NetworkVolume,
        Storage::NetworkVolumeBaseline,
        Storage::ObjectStorage,
    ];

    /// Stable id for URLs, the CLI and JSON.
    pub const fn id(self) -> &'static str {
        match self {
            Storage::LocalNvme => "nvme",
            Storage::NetworkVolume => "network",
            Storage::NetworkVolumeBaseline => "network-baseline",
            Storage::ObjectStorage => "object",
        }
    }

    /// From its id (case-insensitive).
    pub fn parse(s: &str) -> Option<Storage> {
        let s = s.trim().to_ascii_lowercase();
        Storage::ALL.iter().copied().find(|p| p.id() == s)
    }

    /// Sequential read bandwidth (decimal B/s).
    pub fn bandwidth(self) -> BytesPerSecond {
        match self {
            Storage::LocalNvme => BytesPerSecond::from_gbps(NVME_GEN4_GBPS),
            Storage::NetworkVolume => BytesPerSecond(NETWORK_VOLUME_BPS),
            Storage::NetworkVolumeBaseline => BytesPerSecond(NETWORK_VOLUME_BASELINE_BPS),
            Storage::ObjectStorage => BytesPerSecond::from_gbps(OBJECT_STORAGE_GBPS),
        }
    }

    /// The i18n key of a one-line description.
    pub const fn description_key(self) -> &'static str {
        match self {
            Storage::LocalNvme => "storage_nvme",
            Storage::NetworkVolume => "storage_network",
            Storage::NetworkVolumeBaseline => "storage_network_baseline",
            Storage::ObjectStorage => "storage_object",
        }
    }
}

/// The link between host memory and one GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", content = "gen", rename_all = "snake_case")]
pub enum HostLink {
    /// PCIe x16 of this generation.
    Pcie(u32),
    /// NVLink-C2C to a Grace CPU.
    NvlinkC2c,
    /// A figure entered by the user.
    Custom,
}

impl HostLink {
    /// A short label: `PCIe Gen5 x16`, `NVLink-C2C`, `custom link`.
    pub fn label(self) -> String {
        match self {
            HostLink::Pcie(g) => format!("PCIe Gen{g} x16"),
            HostLink::NvlinkC2c => "NVLink-C2C".into(),
            HostLink::Custom => "custom link".into(),
        }
    }
}

/// Whether the accelerator is a Grace superchip part whose GPU reaches host memory over
/// NVLink-C2C (GH200, GB200, GB300: the catalog's interconnect text names "C2C").
pub fn has_nvlink_c2c(gpu: &Accelerator) -> bool {
    gpu.interconnect.kind.to_ascii_uppercase().contains("C2C")
}

/// The nominal per-direction host-to-GPU link of an accelerator: NVLink-C2C on Grace parts,
/// else PCIe x16 of its generation; `None` when the catalog gives no PCIe generation (TPUs,
/// Apple SoCs, cloud-only chips).
pub fn host_link(gpu: &Accelerator) -> Option<(HostLink, BytesPerSecond)> {
    if has_nvlink_c2c(gpu) {
        return Some((
            HostLink::NvlinkC2c,
            BytesPerSecond::from_gbps(NVLINK_C2C_PER_DIRECTION_GBPS),
        ));
    }
    let g = gpu.pcie_gen?;
    gpu.pcie_per_direction().map(|b| (HostLink::Pcie(g), b))
}

/// Inputs of the load-time model. Every figure is editable.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LoadInputs {
    /// Storage read bandwidth (decimal B/s), e.g. [`Storage::bandwidth`].
    pub storage_bandwidth: BytesPerSecond,
    /// Host-link bandwidth per direction, nominal (B/s); `None` = from the catalog.
    pub host_link: Option<BytesPerSecond>,
    /// Fraction of the nominal host link reached, 0–1 ([`HOST_LINK_EFFICIENCY`]).
    pub link_efficiency: f64,
    /// Tensor-parallel degree: GPUs that each load `1 / tp` of the weights in parallel.
    pub tp: u64,
    /// Replicas on one node reading from the same storage at the same time (≥ 1).
    pub readers: u64,
    /// Whether storage reads and host-to-GPU copies overlap (pipelined).
    pub overlap: bool,
    /// Engine start-up after the weights are resident, seconds ([`ENGINE_STARTUP_S`]).
    pub engine_startup_s: f64,
    /// Weight precision override; `None` = the checkpoint's own format.
    pub weights_dtype: Option<Dtype>,
}

impl Default for LoadInputs {
    fn default() -> Self {
        LoadInputs {
            storage_bandwidth: Storage::LocalNvme.bandwidth(),
            host_link: None,
            link_efficiency: HOST_LINK_EFFICIENCY,
            tp: 1,
            readers: 1,
            overlap: true,
            engine_startup_s: ENGINE_STARTUP_S,
            weights_dtype: None,
        }
    }
}

impl LoadInputs {
    /// Checks every figure is finite and in range.
    pub fn validate(&self) -> Result<(), CalcError> {
        let bw = self.storage_bandwidth.0;
        if !(bw.is_finite() && bw > 0.0 && bw <= 1e13) {
            return Err(CalcError::out_of_range(
                Phrase::tr("fld_storage_bw"),
                bw / 1e9,
                Phrase::tr("rng_above0_at_most").val("max", "10,000 GB/s"),
            ));
        }
        if let Some(l) = self.host_link {
            if !(l.0.is_finite() && l.0 > 0.0 && l.0 <= 1e13) {
                return Err(CalcError::out_of_range(
                    Phrase::tr("fld_host_link"),
                    l.0 / 1e9,
                    Phrase::tr("rng_above0_at_most").val("max", "10,000 GB/s"),
                ));
            }
        }
        let e = self.link_efficiency;
        if !(e.is_finite() && e > 0.0 && e <= 1.0) {
            return Err(CalcError::out_of_range(
                Phrase::tr("fld_link_eff"),
                e,
                Phrase::tr("rng_fraction"),
            ));
        }
        for (name, v) in [("tp", self.tp), ("readers", self.readers)] {
            CalcError::whole_in(Phrase::verbatim(name), v, (1, 1024))?;
        }
        let s = self.engine_startup_s;
        if !(s.is_finite() && (0.0..=3600.0).contains(&s)) {
            return Err(CalcError::out_of_range(
                Phrase::tr("fld_engine_startup"),
                s,
                Phrase::tr("rng_seconds_from_to")
                    .val("lo", 0)
                    .val("hi", "3,600"),
            ));
        }
        Ok(())
    }
}

/// Which stage of the loading path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StageKind {
    /// Storage → host memory.
    Storage,
    /// Host memory → GPU memory.
    HostToGpu,
}

/// One stage of the loading path.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stage {
    /// Which stage.
    pub kind: StageKind,
    /// Bytes this stage moves through its slowest single resource (the shared storage device,
    /// or one GPU's own link).
    pub bytes: Bytes,
    /// Effective bandwidth of that resource (efficiency applied), B/s.
    pub bandwidth: BytesPerSecond,
    /// `bytes / bandwidth`.
    pub seconds: Seconds,
    /// The rate at which this stage moves the model as a whole (B/s): storage bandwidth /
    /// readers, or tp × link for the parallel copies. `load = model bytes / slowest rate`.
    pub model_rate: BytesPerSecond,
}

/// Load and cold-start times of one replica.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadReport {
    /// Accelerator id.
    pub gpu: String,
    /// TP degree.
    pub tp: u64,
    /// Weight bytes of the whole model.
    pub model_bytes: Bytes,
    /// Weight bytes on one GPU.
    pub bytes_per_gpu: Bytes,
    /// The host link used.
    pub host_link: HostLink,
    /// Storage → host memory.
    pub storage: Stage,
    /// Host memory → GPU memory (one GPU; all `tp` run in parallel).
    pub host_to_gpu: Stage,
    /// The slower stage.
    pub slowest: StageKind,
    /// Overlapped: `max(storage, host_to_gpu)`.
    pub pipelined: Seconds,
    /// One after the other: `storage + host_to_gpu`.
    pub sequential: Seconds,
    /// The load time used (pipelined when `overlap`, else sequential).
    pub load: Seconds,
    /// Engine start-up.
    pub engine_startup: Seconds,
    /// Cold start of a new replica: `load + engine_startup`.
    pub cold_start: Seconds,
    /// Notes (translated sentences; serialized and displayed in English).
    pub notes: Vec<Phrase>,
    /// Derivations of the headline numbers.
    pub derivations: Vec<Derivation>,
}

fn weight_bytes(m: &ModelDesc, tp: u64, d: Option<Dtype>) -> Result<(Bytes, Bytes), CalcError> {
    let w = crate::core::calc::weights::chosen(m, d, tp)?;
    Ok((w.total, w.per_gpu))
}

fn resolve_link(
    gpu: &Accelerator,
    given: Option<BytesPerSecond>,
) -> Result<(HostLink, BytesPerSecond), CalcError> {
    match given {
        Some(b) => Ok((HostLink::Custom, b)),
        None => host_link(gpu).ok_or_else(|| CalcError::MissingSpec {
            gpu: gpu.name.clone(),
            what: Phrase::tr("what_host_link"),
        }),
    }
}

/// Load time of one replica of `m` on `tp` GPUs of `gpu` (see the module docs for the model).
///
/// `t_storage = readers × W / BW_storage`; `t_link = (W / tp) / (link × e_link)`;
/// pipelined `load = max(t_storage, t_link)` = `W / min(BW_storage / readers, tp × link ×
/// e_link)`; sequential `load = t_storage + t_link`; `cold start = load + t_engine`.
pub fn load_time(
    m: &ModelDesc,
    gpu: &Accelerator,
    inp: &LoadInputs,
) -> Result<LoadReport, CalcError> {
    inp.validate()?;
    let (total, per_gpu) = weight_bytes(m, inp.tp, inp.weights_dtype)?;
    let (link_kind, link_nominal) = resolve_link(gpu, inp.host_link)?;
    let link = BytesPerSecond(link_nominal.0 * inp.link_efficiency);
    let storage_bytes = total * inp.readers;
    let storage = Stage {
        kind: StageKind::Storage,
        bytes: storage_bytes,
        bandwidth: inp.storage_bandwidth,
        seconds: storage_bytes / inp.storage_bandwidth,
        model_rate: BytesPerSecond(inp.storage_bandwidth.0 / inp.readers as f64),
    };
    let host_to_gpu = Stage {
        kind: StageKind::HostToGpu,
        bytes: per_gpu,
        bandwidth: link,
        seconds: per_gpu / link,
        model_rate: BytesPerSecond(link.0 * inp.tp as f64),
    };
    let slowest = if storage.seconds.0 >= host_to_gpu.seconds.0 {
        StageKind::Storage
    } else {
        StageKind::HostToGpu
    };
    let pipelined = Seconds(storage.seconds.0.max(host_to_gpu.seconds.0));
    let sequential = storage.seconds + host_to_gpu.seconds;
    let load = if inp.overlap { pipelined } else { sequential };
    let engine_startup = Seconds(inp.engine_startup_s);
    let cold_start = load + engine_startup;
    let mut notes = Vec::new();
    if inp.tp > 1 {
        let key = if inp.readers > 1 {
            "load_note_tp_shards_readers"
        } else {
            "load_note_tp_shards"
        };
        notes.push(
            Phrase::tr(key)
                .val("tp", inp.tp)
                .val("shard", per_gpu.fmt_gb())
                .val("total", total.fmt_gb())
                .val("readers", inp.readers),
        );
    }
    if slowest == StageKind::Storage {
        notes.push(Phrase::tr("load_note_storage_bottleneck"));
    }
    notes.push(Phrase::tr("load_note_cold_start_excludes"));
    let derivations = load_derivations(&LoadD {
        total,
        per_gpu,
        inp,
        link_nominal,
        storage: &storage,
        host_to_gpu: &host_to_gpu,
        load,
        cold_start,
    });
    Ok(LoadReport {
        gpu: gpu.id.clone(),
        tp: inp.tp,
        model_bytes: total,
        bytes_per_gpu: per_gpu,
        host_link: link_kind,
        storage,
        host_to_gpu,
        slowest,
        pipelined,
        sequential,
        load,
        engine_startup,
        cold_start,
        notes,
        derivations,
    })
}

struct LoadD<'a> {
    total: Bytes,
    per_gpu: Bytes,
    inp: &'a LoadInputs,
    link_nominal: BytesPerSecond,
    storage: &'a Stage,
    host_to_gpu: &'a Stage,
    load: Seconds,
    cold_start: Seconds,
}

/// A count the user entered in the field of the same name as its symbol (`readers`, `tp`).
fn user_count(name: &str, name_key: &str, n: u64) -> Term {
    Term::num(name, name_key, n as f64, "", Source::User(name.into()))
}

/// The host link's nominal bandwidth, `link`: the user's figure when given, else the one the
/// catalog's PCIe generation implies.
fn host_link_term(link_nominal: BytesPerSecond, user_given: bool) -> Term {
    let source = if user_given {
        Source::User("host_link".into())
    } else {
        Source::Catalog("pcie_gen".into())
    };
    Term::num(
        "BW_link",
        "term_host_link",
        link_nominal.gbps(),
        "GB/s",
        source,
    )
}

fn load_derivations(d: &LoadD) -> Vec<Derivation> {
    let w_gb = d.total.gb();
    vec![
        Derivation {
            title_key: "load_storage_time".into(),
            formula: "n_r × W / BW_storage".into(),
            substituted: format!(
                "{} × {} GB / {} GB/s",
                d.inp.readers,
                fmt_sig(w_gb),
                fmt_sig(d.inp.storage_bandwidth.gbps())
            ),
            result: format!("{} s", fmt_sig(d.storage.seconds.0)),
            terms: vec![
                Term::num(
                    "W",
                    "term_weights",
                    w_gb,
                    "GB",
                    Source::Derived("src_checkpoint_weight_bytes".into()),
                ),
                Term::num(
                    "BW_storage",
                    "term_storage_bandwidth",
                    d.inp.storage_bandwidth.gbps(),
                    "GB/s",
                    Source::User("storage".into()),
                ),
                Term::num(
                    "n_r",
                    "term_readers",
                    d.inp.readers as f64,
                    "",
                    Source::User("readers".into()),
                ),
            ],
            notes: vec![],
            ..Default::default()
        },
        Derivation {
            title_key: "load_host_to_gpu_time".into(),
            formula: "(W / tp) / (BW_link × e_link)".into(),
            substituted: format!(
                "{} GB / ({} GB/s × {})",
                fmt_sig(d.per_gpu.gb()),
                fmt_sig(d.link_nominal.gbps()),
                fmt_sig(d.inp.link_efficiency)
            ),
            result: format!("{} s", fmt_sig(d.host_to_gpu.seconds.0)),
            terms: vec![
                Term::num(
                    "W / tp",
                    "term_weights_per_gpu",
                    d.per_gpu.gb(),
                    "GB",
                    Source::Derived("src_weights_over_tp".into()),
                ),
                host_link_term(d.link_nominal, d.inp.host_link.is_some()),
                Term::num(
                    "e_link",
                    "term_link_efficiency",
                    d.inp.link_efficiency,
                    "",
                    Source::Default("src_pinned_copy".into()),
                ),
                user_count("tp", "term_tp", d.inp.tp),
            ],
            notes: vec![],
            ..Default::default()
        },
        Derivation {
            title_key: "load_time".into(),
            formula: if d.inp.overlap {
                "max(t_storage, t_link)".into()
            } else {
                "t_storage + t_link".into()
            },
            substituted: format!(
                "{} s, {} s",
                fmt_sig(d.storage.seconds.0),
                fmt_sig(d.host_to_gpu.seconds.0)
            ),
            result: format!("{} s", fmt_sig(d.load.0)),
            terms: vec![],
            notes: vec![],
            ..Default::default()
        },
        Derivation {
            title_key: "cold_start".into(),
            formula: "t_load + t_engine".into(),
            substituted: format!(
                "{} s + {} s",
                fmt_sig(d.load.0),
                fmt_sig(d.inp.engine_startup_s)
            ),
            result: format!("{} s", fmt_sig(d.cold_start.0)),
            terms: vec![Term::num(
                "t_engine",
                "term_engine_startup",
                d.inp.engine_startup_s,
                "s",
                Source::Default("src_engine_startup_rough".into()),
            )],
            notes: vec![],
            ..Default::default()
        },
    ]
}

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

/// The derivation of the bandwidth ratio `(HBM × e_bw) / (link × e_link)`.
fn ratio_derivation(
    gpu: &Accelerator,
    eff: &Efficiencies,
    (link_nominal, user_given): (BytesPerSecond, bool),
    e: f64,
    ratio: f64,
) -> Derivation {
    Derivation {
        title_key: "offload_bandwidth_ratio".into(),
        formula: "(HBM × e_bw) / (BW_link × e_link)".into(),
        substituted: format!(
            "({} GB/s × {}) / ({} GB/s × {})",
            fmt_sig(gpu.bandwidth.gbps()),
            fmt_sig(eff.bandwidth),
            fmt_sig(link_nominal.gbps()),
            fmt_sig(e)
        ),
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
        notes: vec![],
        ..Default::default()
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
    Derivation {
        title_key: title_key.into(),
        formula: format!("TPOT + {symbol} × (1 / (BW_link × e_link) − 1 / (HBM × e_bw))"),
        substituted: format!(
            "{} ms + {} GB × (1 / {} GB/s − 1 / {} GB/s)",
            fmt_sig(tpot * 1e3),
            fmt_sig(bytes / 1e9),
            fmt_sig(link / 1e9),
            fmt_sig(hbm / 1e9)
        ),
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
        notes: vec![],
        ..Default::default()
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
    let extra = |bytes: f64| bytes * (1.0 / link - 1.0 / hbm);
    let tpot = r.tpot.0;
    let tw = tpot + extra(w);
    let tkv = tpot + extra(kv);
    let ratio = hbm / link;
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
    use super::*;
    use crate::core::hardware::catalog::Catalog;
    use crate::core::model::presets;

    fn gpu(id: &str) -> &'static Accelerator {
        Catalog::builtin().get(id).unwrap_or_else(|e| panic!("{e}"))
    }

    fn model(id: &str) -> ModelDesc {
        presets::get(id)
            .map(|p| p.parse())
            .unwrap_or_else(|| panic!("preset {id}"))
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// The load notes are translated phrases: the English reads with the shard, the total and
    /// the readers filled in, the Korean is Korean with every placeholder filled.
    #[test]
    fn load_notes_read_in_both_languages() {
        use crate::core::base::Lang;
        let m = model("meta-llama__Meta-Llama-3.1-8B");
        let inp = LoadInputs {
            tp: 2,
            readers: 3,
            storage_bandwidth: BytesPerSecond(1e8),
            ..LoadInputs::default()
        };
        let r = load_time(&m, gpu("h100-sxm"), &inp).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.slowest, StageKind::Storage);
        let en: Vec<String> = r.notes.iter().map(|n| n.text(Lang::En)).collect();
        assert_eq!(en.len(), 3, "{en:?}");
        let shards = format!(
            "Each of the 2 GPUs copies its own {} shard",
            r.bytes_per_gpu.fmt_gb()
        );
        assert!(en[0].starts_with(&shards), "{}", en[0]);
        assert!(en[0].contains(&r.model_bytes.fmt_gb()), "{}", en[0]);
        assert!(en[0].ends_with(", 3 times for 3 replicas sharing the device."));
        assert!(en[1].starts_with("Storage is the bottleneck"));
        assert!(en[2].starts_with("Cold start excludes"));
        for n in &r.notes {
            let ko = n.text(Lang::Ko);
            assert!(ko.chars().any(|c| ('가'..='힣').contains(&c)), "{ko}");
            assert!(!ko.contains('{'), "{ko}");
        }
    }

    #[test]
    fn link_is_pcie_by_generation_or_c2c_on_grace() {
        // PCIe x16 per direction: 2^(gen+1) GB/s → Gen4 32, Gen5 64, Gen6 128.
        let l40s = host_link(gpu("l40s"));
        assert_eq!(
            l40s.map(|(k, b)| (k, b.gbps())),
            Some((HostLink::Pcie(4), 32.0))
        );
        let h100 = host_link(gpu("h100-sxm"));
        assert_eq!(
            h100.map(|(k, b)| (k, b.gbps())),
            Some((HostLink::Pcie(5), 64.0))
        );
        let b300 = host_link(gpu("b300"));
        assert_eq!(
            b300.map(|(k, b)| (k, b.gbps())),
            Some((HostLink::Pcie(6), 128.0))
        );
        for id in ["gh200-96gb", "gb200", "gb300"] {
            let l = host_link(gpu(id));
            assert_eq!(
                l.map(|(k, b)| (k, b.gbps())),
                Some((HostLink::NvlinkC2c, NVLINK_C2C_PER_DIRECTION_GBPS)),
                "{id}"
            );
        }
    }

    #[test]
    fn load_is_bytes_over_the_slowest_stage() {
        // Llama-2-7B bf16: W = 13,476,831,232 B (WORKED_EXAMPLES §1).
        let m = model("meta-llama__Llama-2-7b-hf");
        let g = gpu("h100-sxm");
        let w = 13_476_831_232.0;
        for storage in Storage::ALL {
            for tp in [1u64, 2, 4] {
                let inp = LoadInputs {
                    storage_bandwidth: storage.bandwidth(),
                    tp,
                    ..LoadInputs::default()
                };
                let r = load_time(&m, g, &inp).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(r.model_bytes.0 as f64, w);
                // Slowest effective rate at which the model moves: storage, or tp parallel links.
                let link = 64e9 * HOST_LINK_EFFICIENCY;
                let slowest = storage.bandwidth().0.min(tp as f64 * link);
                // Norm weights are replicated on every rank (not split), hence the tolerance.
                assert!(
                    (r.load.0 / (w / slowest) - 1.0).abs() < 1e-4,
                    "{storage:?} tp {tp}: {} vs {}",
                    r.load.0,
                    w / slowest
                );
                assert_eq!(r.load, r.pipelined);
                assert!((r.cold_start.0 - r.load.0 - ENGINE_STARTUP_S).abs() < 1e-9);
            }
        }
        // NVMe at 7 GB/s vs a Gen5 link at 51.2 GB/s: storage is the bottleneck.
        let r = load_time(&m, g, &LoadInputs::default()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.slowest, StageKind::Storage);
        assert!((r.load.0 - w / 7e9).abs() < 1e-9);
        // Without overlap the stages add.
        let seq = load_time(
            &m,
            g,
            &LoadInputs {
                overlap: false,
                ..LoadInputs::default()
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert!((seq.load.0 - (w / 7e9 + w / (64e9 * HOST_LINK_EFFICIENCY))).abs() < 1e-9);
    }

    #[test]
    fn shared_storage_slows_every_reader() {
        let m = model("meta-llama__Llama-2-7b-hf");
        let one =
            load_time(&m, gpu("l40s"), &LoadInputs::default()).unwrap_or_else(|e| panic!("{e}"));
        let eight = load_time(
            &m,
            gpu("l40s"),
            &LoadInputs {
                readers: 8,
                ..LoadInputs::default()
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert!((eight.storage.seconds.0 / one.storage.seconds.0 - 8.0).abs() < 1e-9);
    }

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

    #[test]
    fn bad_inputs_are_errors() {
        let m = model("meta-llama__Llama-2-7b-hf");
        let g = gpu("h100-sxm");
        for inp in [
            LoadInputs {
                storage_bandwidth: BytesPerSecond(0.0),
                ..LoadInputs::default()
            },
            LoadInputs {
                storage_bandwidth: BytesPerSecond(f64::NAN),
                ..LoadInputs::default()
            },
            LoadInputs {
                tp: 0,
                ..LoadInputs::default()
            },
            LoadInputs {
                link_efficiency: 1.5,
                ..LoadInputs::default()
            },
            LoadInputs {
                engine_startup_s: -1.0,
                ..LoadInputs::default()
            },
        ] {
            assert!(load_time(&m, g, &inp).is_err(), "{inp:?}");
        }
        // No PCIe generation in the catalog and no figure given → a clear error.
        assert!(load_time(&m, gpu("tpu-v4"), &LoadInputs::default()).is_err());
        let given = LoadInputs {
            host_link: Some(BytesPerSecond::from_gbps(16.0)),
            ..LoadInputs::default()
        };
        assert!(load_time(&m, gpu("tpu-v4"), &given).is_ok());
    }
}
