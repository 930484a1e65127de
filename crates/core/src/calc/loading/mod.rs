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
//!
//! Where each part lives: storage and host-link bandwidths in `link`; the load time and its
//! derivations in `load`; offloading in `offload`.

mod link;
mod load;
mod offload;

pub use link::{
    has_nvlink_c2c, host_link, HostLink, Storage, HOST_LINK_EFFICIENCY,
    NETWORK_VOLUME_BASELINE_BPS, NETWORK_VOLUME_BPS, NVLINK_C2C_PER_DIRECTION_GBPS, NVME_GEN4_GBPS,
    OBJECT_STORAGE_GBPS,
};
pub use load::{load_time, LoadInputs, LoadReport, Stage, StageKind, ENGINE_STARTUP_S};
pub use offload::{offload, OffloadInputs, OffloadReport};

/// What the tests of this folder share: a catalog GPU and a preset model by id.
#[cfg(test)]
mod test_support {
    use crate::hardware::catalog::{Accelerator, Catalog};
    use crate::model::{presets, ModelDesc};

    pub(super) fn gpu(id: &str) -> &'static Accelerator {
        Catalog::builtin().get(id).unwrap_or_else(|e| panic!("{e}"))
    }

    pub(super) fn model(id: &str) -> ModelDesc {
        presets::get(id)
            .map(|p| p.parse())
            .unwrap_or_else(|| panic!("preset {id}"))
            .unwrap_or_else(|e| panic!("{e}"))
    }
}
