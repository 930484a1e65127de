//! Where the bytes come from and the link they cross to the GPU: storage bandwidths (local
//! NVMe, a network block volume, object storage; [`Storage`]) and the host link, PCIe x16 per
//! direction `2^(gen+1)` GB/s nominal (Gen4 32, Gen5 64, Gen6 128) or NVLink-C2C 450 GB/s per
//! direction on Grace parts, times [`HOST_LINK_EFFICIENCY`].

use crate::base::units::{BytesPerSecond, MIB};
use crate::hardware::catalog::Accelerator;
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

#[cfg(test)]
mod tests {
    use super::super::test_support::gpu;
    use super::*;

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
}
