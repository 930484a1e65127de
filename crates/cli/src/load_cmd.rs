//! `llmcalc load --config FILE --gpu ID [--tp N] [--storage nvme|network|network-baseline|object
//! | --storage-gbps S] [--link-gbps L] [--link-eff F] [--readers N] [--startup-s S]
//! [--sequential true] [--weights-dtype D] [--kv-dtype D] [--batch B] [--input-len I]
//! [--output-len O] [--json]`: model load time along storage → host memory → GPU memory, the
//! cold start of a new replica, and what decode would cost with the weights or the KV cache in
//! host memory (`core::loading`). Bad input exits 2 with one sentence.

use super::args::{read_file, required, short};
use super::opts::LoadArgs;
use super::{write_json, write_text, CliError};
use crate::core::base::Dtype;
use crate::core::base::{fmt_sig, BytesPerSecond};
use crate::core::calc::Efficiencies;
use crate::core::calc::{
    load_time, offload, LoadInputs, LoadReport, OffloadInputs, OffloadReport, Stage, StageKind,
    Storage, Workload,
};
use crate::core::hardware::Catalog;
use crate::core::model::parse_model_text;
use serde_json::{json, Value};
use std::io::Write;

/// The storage: `--storage-gbps` when given, else the `--storage` kind.
fn storage(args: &LoadArgs) -> Result<(BytesPerSecond, String), CliError> {
    if let Some(g) = args.storage_gbps {
        return Ok((BytesPerSecond::from_gbps(g), "custom".into()));
    }
    let s = args.storage.as_str();
    Storage::parse(s)
        .map(|p| (p.bandwidth(), p.id().to_string()))
        .ok_or_else(|| {
            CliError::Usage(format!(
                "--storage must be one of {}, not \"{}\"",
                Storage::ALL
                    .iter()
                    .map(|p| p.id())
                    .collect::<Vec<_>>()
                    .join(", "),
                short(s)
            ))
        })
}

/// Runs the command.
pub fn run(args: &LoadArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let t = &args.target;
    let model = parse_model_text(&read_file("config", t.config.as_deref())?)?;
    let gpu = Catalog::builtin().get(required("gpu", t.gpu.as_deref())?)?;
    let tp = t.tp;
    let weights_dtype = t
        .dtypes
        .weights_dtype
        .as_deref()
        .map(Dtype::parse)
        .transpose()?;
    let (storage_bw, storage_id) = storage(args)?;
    let host_link = args.link_gbps.map(BytesPerSecond::from_gbps);
    let link_efficiency = args.link_eff;
    let inp = LoadInputs {
        storage_bandwidth: storage_bw,
        host_link,
        link_efficiency,
        tp,
        readers: args.readers,
        overlap: !args.sequential,
        engine_startup_s: args.startup_s,
        weights_dtype,
    };
    let l = load_time(&model, gpu, &inp)?;
    let mut workload = Workload::new(args.batch, args.input_len, args.output_len, tp);
    workload.weights_dtype = weights_dtype;
    workload.kv_dtype = t.dtypes.kv_dtype.as_deref().map(Dtype::parse).transpose()?;
    let off_inp = OffloadInputs {
        workload,
        host_link,
        link_efficiency,
    };
    let off = offload(&model, gpu, &off_inp, &Efficiencies::default())?;
    if args.json {
        return write_json(out, &to_json(&l, &off, &storage_id));
    }
    write_text(out, &render(&model.name, &l, &off, &storage_id))
}

fn stage_json(s: &Stage) -> Value {
    json!({
        "bytes": s.bytes.0,
        "bandwidth_gbps": s.bandwidth.gbps(),
        "seconds": s.seconds.0,
        "model_rate_gbps": s.model_rate.gbps(),
    })
}

/// The load and offload reports as the CLI's JSON object (seconds, decimal GB/s, ms per token).
pub fn to_json(l: &LoadReport, o: &OffloadReport, storage_id: &str) -> Value {
    json!({
        "gpu": l.gpu,
        "tp": l.tp,
        "load_seconds": l.load.0,
        "storage_seconds": l.storage.seconds.0,
        "host_to_gpu_seconds": l.host_to_gpu.seconds.0,
        "pipelined_seconds": l.pipelined.0,
        "sequential_seconds": l.sequential.0,
        "engine_startup_seconds": l.engine_startup.0,
        "cold_start_seconds": l.cold_start.0,
        "slowest_stage": l.slowest,
        "storage": storage_id,
        "host_link": l.host_link,
        "model_bytes": l.model_bytes.0,
        "bytes_per_gpu": l.bytes_per_gpu.0,
        "stages": { "storage": stage_json(&l.storage), "host_to_gpu": stage_json(&l.host_to_gpu) },
        "offload": {
            "batch_note": "decode step at the given batch (default 1) and mean context",
            "gpu_memory_gbps_effective": o.gpu_memory_bandwidth.gbps(),
            "host_link_gbps_effective": o.host_link_bandwidth.gbps(),
            "bandwidth_ratio": o.bandwidth_ratio,
            "weight_bytes_per_gpu": o.weight_bytes_per_gpu.0,
            "kv_bytes_per_gpu": o.kv_bytes_per_gpu.0,
            "tpot_on_gpu_ms": o.tpot_on_gpu.ms(),
            "tpot_weights_offloaded_ms": o.tpot_weights_offloaded.ms(),
            "tpot_kv_offloaded_ms": o.tpot_kv_offloaded.ms(),
            "slowdown_weights": o.slowdown_weights,
            "slowdown_kv": o.slowdown_kv,
        },
        "notes": l.notes,
        "derivations": l.derivations.iter().chain(o.derivations.iter()).collect::<Vec<_>>(),
    })
}

fn render(model: &str, l: &LoadReport, o: &OffloadReport, storage_id: &str) -> String {
    let mut s = format!(
        "{model} on {} × TP {}: load {} s, cold start {} s\n",
        l.gpu,
        l.tp,
        fmt_sig(l.load.0),
        fmt_sig(l.cold_start.0)
    );
    s.push_str(&format!(
        "  storage → host   {:>9} s  ({} at {} GB/s, {storage_id}){}\n",
        fmt_sig(l.storage.seconds.0),
        l.storage.bytes.fmt_gb(),
        fmt_sig(l.storage.bandwidth.gbps()),
        if l.slowest == StageKind::Storage {
            "  ← slowest"
        } else {
            ""
        }
    ));
    s.push_str(&format!(
        "  host → GPU       {:>9} s  ({} per GPU at {} GB/s effective, {}){}\n",
        fmt_sig(l.host_to_gpu.seconds.0),
        l.bytes_per_gpu.fmt_gb(),
        fmt_sig(l.host_to_gpu.bandwidth.gbps()),
        l.host_link.label(),
        if l.slowest == StageKind::HostToGpu {
            "  ← slowest"
        } else {
            ""
        }
    ));
    s.push_str(&format!(
        "  pipelined {} s, sequential {} s; engine start-up {} s\n",
        fmt_sig(l.pipelined.0),
        fmt_sig(l.sequential.0),
        fmt_sig(l.engine_startup.0)
    ));
    s.push_str(&format!(
        "offload (decode step): on GPU {} ms; weights in host memory {} ms ({}× slower); KV cache in host memory {} ms ({}×); HBM/link = {}×\n",
        fmt_sig(o.tpot_on_gpu.ms()),
        fmt_sig(o.tpot_weights_offloaded.ms()),
        fmt_sig(o.slowdown_weights),
        fmt_sig(o.tpot_kv_offloaded.ms()),
        fmt_sig(o.slowdown_kv),
        fmt_sig(o.bandwidth_ratio)
    ));
    for n in &l.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s
}
