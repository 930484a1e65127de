//! The link a request's KV crosses between disaggregated prefill and decode workers
//! (`sim::disagg`).

use crate::base::error::{CalcError, Phrase};
use crate::hardware::interconnect::{Topology, INTER_NODE_PER_DIRECTION_GBPS};
use crate::hardware::Accelerator;
use serde::{Deserialize, Serialize};

/// The link a request's KV crosses from its prefill GPU to its decode GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum KvLink {
    /// The GPUs' scale-up fabric (both pools in one NVLink domain: one 8-GPU node, a GB200
    /// NVL72 rack): the GPU's own per-direction bandwidth.
    Nvlink,
    /// InfiniBand between nodes: one 400 Gb/s NIC per GPU, 50 GB/s each way.
    #[default]
    Ib,
    /// RoCE between nodes: one 400 GbE NIC per GPU, 50 GB/s each way (the bandwidth of
    /// InfiniBand's; only the name differs here).
    Roce,
}

impl KvLink {
    /// The CLI's name.
    pub fn id(self) -> &'static str {
        match self {
            KvLink::Nvlink => "nvlink",
            KvLink::Ib => "ib",
            KvLink::Roce => "roce",
        }
    }

    /// Reads a CLI name.
    pub fn parse(s: &str) -> Result<KvLink, CalcError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "nvlink" => Ok(KvLink::Nvlink),
            "ib" | "infiniband" => Ok(KvLink::Ib),
            "roce" => Ok(KvLink::Roce),
            _ => Err(CalcError::BadValue {
                key: "kv_link".into(),
                found: Phrase::verbatim(s),
                expected: Phrase::tr("exp_kv_link"),
            }),
        }
    }

    /// The link a deployment of `gpus` GPUs of `gpu` uses by default: the scale-up fabric when
    /// every GPU of both pools fits in one of its domains (`Parallel::node_size`) and it has
    /// one (not PCIe only: there the KV goes through the NIC, as between nodes), else
    /// InfiniBand.
    pub fn auto(gpus: u64, gpu: &Accelerator) -> KvLink {
        let fabric = gpu.interconnect.topology != Topology::Pcie;
        if fabric && gpus <= crate::sim::parallel::Parallel::node_size(gpu) {
            KvLink::Nvlink
        } else {
            KvLink::Ib
        }
    }

    /// Bytes per second one GPU sends over this link: NVLink's per-direction figure of `gpu`
    /// (the NIC's when the catalog gives none).
    pub fn bytes_per_s(self, gpu: &Accelerator) -> f64 {
        let nic = INTER_NODE_PER_DIRECTION_GBPS * 1e9;
        match self {
            KvLink::Nvlink => gpu.interconnect.per_direction().map_or(nic, |b| b.0),
            KvLink::Ib | KvLink::Roce => nic,
        }
    }
}
