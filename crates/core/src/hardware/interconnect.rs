//! Interconnects: how a chip's GPUs are wired ([`Topology`], [`Interconnect`]), the textbook's
//! presets (PCIe, NVLink bridge, NVLink + NVSwitch, a switchless 8-GPU mesh, across nodes:
//! [`InterconnectPreset`]) and which link a scenario uses ([`Link`]).

use crate::base::units::BytesPerSecond;
use serde::{Deserialize, Serialize};

/// Across nodes, one 400 Gb/s NIC per GPU: 50 GB/s per GPU per direction (AWS p5: 3,200 Gb/s
/// for 8 GPUs; reference notes, "Inter-node ≈ 50 GB/s").
pub const INTER_NODE_PER_DIRECTION_GBPS: f64 = 50.0;

/// How a chip's GPUs are wired to each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(borsh::BorshSerialize, borsh::BorshDeserialize)]
pub enum Topology {
    /// PCIe only, through the host (no scale-up fabric).
    Pcie,
    /// A bridge joining a few cards (NVLink bridge, Infinity Fabric Link).
    Bridge,
    /// Every GPU reaches a switch (NVSwitch, NVLink Switch): any pair gets the full bandwidth.
    Switch,
    /// Direct point-to-point links without a switch (xGMI full mesh, Gaudi RoCE all-to-all):
    /// the per-GPU bandwidth is split over the peers.
    Mesh,
    /// A torus of chip-to-chip links (TPU ICI, NeuronLink-v3).
    Torus,
    /// A ring of chip-to-chip links (NeuronLink-v2).
    Ring,
    /// A single device (Apple SoC): no GPU-to-GPU link.
    Standalone,
}

impl Topology {
    /// Every topology.
    pub const ALL: &'static [Topology] = &[
        Topology::Pcie,
        Topology::Bridge,
        Topology::Switch,
        Topology::Mesh,
        Topology::Torus,
        Topology::Ring,
        Topology::Standalone,
    ];

    /// Stable id used in the data file and JSON.
    pub const fn id(self) -> &'static str {
        match self {
            Topology::Pcie => "pcie",
            Topology::Bridge => "bridge",
            Topology::Switch => "switch",
            Topology::Mesh => "mesh",
            Topology::Torus => "torus",
            Topology::Ring => "ring",
            Topology::Standalone => "none",
        }
    }

    /// From its id.
    pub fn parse(s: &str) -> Option<Topology> {
        Topology::ALL.iter().copied().find(|t| t.id() == s.trim())
    }
}

/// Scale-up interconnect of a chip.
#[derive(
    Debug, Clone, PartialEq, Serialize, Deserialize, borsh::BorshSerialize, borsh::BorshDeserialize,
)]
pub struct Interconnect {
    /// Kind, as text (`NVLink 4 + NVSwitch`, `PCIe only`, `xGMI full mesh`, `ICI`).
    pub kind: String,
    /// How the GPUs are wired.
    pub topology: Topology,
    /// Per-GPU bandwidth, bidirectional (both directions summed, as vendors quote it).
    /// For PCIe-only cards it is the x16 host link.
    pub bidirectional: Option<BytesPerSecond>,
    /// GPUs in one scale-up domain (8 for HGX, 72 for NVL72, 2 for a bridge pair; for PCIe-only
    /// cards the GPUs of a typical server node, 8, or 4 for GeForce; 1 for a standalone chip).
    /// Beyond it, a bridge falls back to PCIe and other links leave the node.
    pub domain_size: u32,
}

impl Interconnect {
    /// Per-GPU bandwidth in one direction: the bidirectional figure / 2.
    pub fn per_direction(&self) -> Option<BytesPerSecond> {
        self.bidirectional.map(|b| BytesPerSecond(b.0 / 2.0))
    }
}

/// The textbook's interconnect presets for multi-GPU scenarios (chapter "GPU reading";
/// `WORKED_EXAMPLES.md` §4). Figures are per GPU; vendors quote bidirectional bandwidth, the
/// transfer time of one message uses one direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InterconnectPreset {
    /// PCIe Gen4 x16: 32 GB/s per direction (64 bidirectional), through the host.
    PcieGen4,
    /// PCIe Gen5 x16: 64 GB/s per direction (128 bidirectional).
    PcieGen5,
    /// NVLink bridge joining 2 cards: 600 GB/s bidirectional, 300 each way (A100/H100 PCIe).
    NvlinkBridge,
    /// NVLink + NVSwitch, 8 GPUs at 900 GB/s bidirectional each, 450 each way (HGX H100/H200).
    NvlinkSwitch,
    /// 8 GPUs wired directly without a switch: 7 links × 128 GB/s bidirectional
    /// (≈128 GB/s per link, 64 each way per peer; AMD MI300X xGMI).
    SwitchlessMesh8,
    /// Across nodes: ≈50 GB/s per GPU each way (one 400 Gb/s NIC per GPU).
    InterNode,
}

impl InterconnectPreset {
    /// Every preset, in display order.
    pub const ALL: &'static [InterconnectPreset] = &[
        InterconnectPreset::PcieGen4,
        InterconnectPreset::PcieGen5,
        InterconnectPreset::NvlinkBridge,
        InterconnectPreset::NvlinkSwitch,
        InterconnectPreset::SwitchlessMesh8,
        InterconnectPreset::InterNode,
    ];

    /// Stable id used in URLs, the CLI and JSON.
    pub const fn id(self) -> &'static str {
        match self {
            InterconnectPreset::PcieGen4 => "pcie4",
            InterconnectPreset::PcieGen5 => "pcie5",
            InterconnectPreset::NvlinkBridge => "nvlink-bridge",
            InterconnectPreset::NvlinkSwitch => "nvswitch",
            InterconnectPreset::SwitchlessMesh8 => "mesh8",
            InterconnectPreset::InterNode => "inter-node",
        }
    }

    /// From its id (case-insensitive).
    pub fn parse(s: &str) -> Option<InterconnectPreset> {
        let s = s.trim().to_ascii_lowercase();
        InterconnectPreset::ALL
            .iter()
            .copied()
            .find(|p| p.id() == s)
    }

    /// Per-GPU bandwidth, both directions summed, in decimal GB/s.
    pub const fn bidirectional_gbps(self) -> f64 {
        match self {
            InterconnectPreset::PcieGen4 => 64.0,
            InterconnectPreset::PcieGen5 => 128.0,
            InterconnectPreset::NvlinkBridge => 600.0,
            InterconnectPreset::NvlinkSwitch => 900.0,
            InterconnectPreset::SwitchlessMesh8 => 7.0 * 128.0,
            InterconnectPreset::InterNode => 2.0 * INTER_NODE_PER_DIRECTION_GBPS,
        }
    }

    /// Per-GPU bandwidth, both directions summed.
    pub fn bidirectional(self) -> BytesPerSecond {
        BytesPerSecond::from_gbps(self.bidirectional_gbps())
    }

    /// Per-GPU bandwidth in one direction (bidirectional / 2).
    pub fn per_direction(self) -> BytesPerSecond {
        BytesPerSecond::from_gbps(self.bidirectional_gbps() / 2.0)
    }

    /// How the GPUs are wired.
    pub const fn topology(self) -> Topology {
        match self {
            InterconnectPreset::PcieGen4 | InterconnectPreset::PcieGen5 => Topology::Pcie,
            InterconnectPreset::NvlinkBridge => Topology::Bridge,
            InterconnectPreset::NvlinkSwitch | InterconnectPreset::InterNode => Topology::Switch,
            InterconnectPreset::SwitchlessMesh8 => Topology::Mesh,
        }
    }

    /// GPUs in one domain (2 for a bridge, 8 for a node; across nodes is unbounded, given as
    /// `u32::MAX`).
    pub const fn domain_size(self) -> u32 {
        match self {
            InterconnectPreset::NvlinkBridge => 2,
            InterconnectPreset::InterNode => u32::MAX,
            _ => 8,
        }
    }

    /// The i18n key of a one-line description.
    pub const fn description_key(self) -> &'static str {
        match self {
            InterconnectPreset::PcieGen4 => "ic_pcie4",
            InterconnectPreset::PcieGen5 => "ic_pcie5",
            InterconnectPreset::NvlinkBridge => "ic_nvlink_bridge",
            InterconnectPreset::NvlinkSwitch => "ic_nvswitch",
            InterconnectPreset::SwitchlessMesh8 => "ic_mesh8",
            InterconnectPreset::InterNode => "ic_inter_node",
        }
    }

    /// As an [`Interconnect`] value.
    pub fn interconnect(self) -> Interconnect {
        Interconnect {
            kind: self.id().to_string(),
            topology: self.topology(),
            bidirectional: Some(self.bidirectional()),
            domain_size: self.domain_size(),
        }
    }
}

/// Which link a multi-GPU scenario uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Link {
    /// The chip's own scale-up link from the catalog.
    Own,
    /// A textbook preset.
    Preset(InterconnectPreset),
}
