//! `llmcalc model --hf ORG/NAME` against a stub of the Hugging Face Hub on loopback: the
//! binary runs with `HF_ENDPOINT=http://127.0.0.1:PORT`, so no test reaches the internet.
//!
//! The stub serves the Hub's URL layout (`/{id}/resolve/main/config.json`,
//! `/{id}/resolve/main/model.safetensors.index.json`, `/api/models/{id}`) for a handful of
//! models, one per case: counted by the API, counted only by an index, not counted, gated
//! (401), missing (404), slow (answers after the timeout), malformed (not JSON), too large.
//! Every expected figure is computed from the fixture the stub serves, parsed by the library.

#![cfg(not(target_arch = "wasm32"))]

use llm_serving_calculator::core::base::group;
use llm_serving_calculator::core::model::parse_model_text;
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The config the stub serves for every model that has one.
fn fixture() -> String {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/meta-llama__Llama-2-7b-hf.json"
    );
    std::fs::read_to_string(p).unwrap_or_default()
}

/// Our count of the fixture, by the library (the CLI must print the same).
fn ours() -> u64 {
    parse_model_text(&fixture()).map_or(0, |m| m.params.total)
}

/// Parameters the stub's API adds to ours for `acme/tower` (a vision tower, say).
const TOWER: u64 = 303_000_000;
/// How long the slow model waits before answering (the CLI's timeout is 1 s).
const SLOW: Duration = Duration::from_secs(4);

/// One answer: status, body, delay.
fn route(path: &str) -> (u16, String, Duration) {
    let ok = |b: String| (200, b, Duration::ZERO);
    let not_found = (404, "Entry not found".to_string(), Duration::ZERO);
    let api = |n: u64| {
        ok(format!(
            r#"{{"id": "x", "safetensors": {{"parameters": {{"F16": {n}}}, "total": {n}}}}}"#
        ))
    };
    let (id, file) = match path.strip_prefix("/api/models/") {
        Some(id) => (id.to_string(), "api"),
        None => match path.split_once("/resolve/main/") {
            Some((id, f)) => (id.trim_start_matches('/').to_string(), f),
            None => return not_found,
        },
    };
    match (id.as_str(), file) {
        ("acme/gated", "config.json") => (
            401,
            "Access to model acme/gated is restricted.".into(),
            Duration::ZERO,
        ),
        ("acme/slow", _) => (200, fixture(), SLOW),
        ("acme/malformed", "config.json") => ok("<!doctype html><title>oops</title>".into()),
        ("acme/huge", "config.json") => ok(" ".repeat((2 << 20) + 10)),
        (
            "acme/counted" | "acme/tower" | "acme/sharded" | "acme/nocount" | "acme/badapi",
            "config.json",
        ) => ok(fixture()),
        ("acme/counted", "api") => api(ours()),
        ("acme/tower", "api") => api(ours() + TOWER),
        ("acme/sharded" | "acme/nocount", "api") => ok(r#"{"id": "x", "gated": false}"#.into()),
        ("acme/badapi", "api") => ok("not json".into()),
        // fp16: two bytes per parameter.
        ("acme/sharded", "model.safetensors.index.json") => ok(format!(
            r#"{{"metadata": {{"total_size": {}}}, "weight_map": {{}}}}"#,
            ours() * 2
        )),
        _ => not_found,
    }
}

/// A request as the stub saw it: the path and whether it carried credentials.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    credentials: bool,
}

fn serve(mut s: TcpStream, seen: &Mutex<Vec<Seen>>) {
    let mut reader = BufReader::new(match s.try_clone() {
        Ok(c) => c,
        Err(_) => return,
    });
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
    let mut credentials = false;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).map_or(true, |n| n == 0) || h.trim().is_empty() {
            break;
        }
        let name = h
            .split(':')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        credentials |= name == "authorization" || name == "cookie";
    }
    if let Ok(mut v) = seen.lock() {
        v.push(Seen {
            path: path.clone(),
            credentials,
        });
    }
    let (status, body, delay) = route(&path);
    std::thread::sleep(delay);
    let head = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = s.write_all(head.as_bytes());
    let _ = s.write_all(body.as_bytes());
}

/// Starts the stub; returns its base URL and the requests it has seen.
fn stub() -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
    let base = format!(
        "http://{}",
        listener
            .local_addr()
            .unwrap_or_else(|e| panic!("addr: {e}"))
    );
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    std::thread::spawn(move || {
        for s in listener.incoming().flatten() {
            let log = Arc::clone(&log);
            std::thread::spawn(move || serve(s, &log));
        }
    });
    (base, seen)
}

/// Runs `llmcalc model --hf ID [extra] ` against `base`; returns (status, stdout, stderr).
fn llmcalc(base: &str, id: &str, extra: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_llmcalc"))
        .args(["model", "--hf", id, "--hf-timeout", "1"])
        .args(extra)
        .env("HF_ENDPOINT", base)
        .output()
        .unwrap_or_else(|e| panic!("run llmcalc: {e}"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json_of(base: &str, id: &str) -> Value {
    let (code, out, err) = llmcalc(base, id, &["--json"]);
    assert_eq!(code, 0, "{id}: {err}");
    serde_json::from_str(&out).unwrap_or(Value::Null)
}

fn paths(seen: &Mutex<Vec<Seen>>) -> Vec<String> {
    seen.lock()
        .map(|v| v.iter().map(|s| s.path.clone()).collect())
        .unwrap_or_default()
}

#[test]
fn counted_by_the_api_both_counts_side_by_side() {
    let (base, seen) = stub();
    let n = ours();
    assert!(n > 0);
    let v = json_of(&base, "acme/counted");
    assert_eq!(v["params_total"], n);
    assert_eq!(v["hub_id"], "acme/counted");
    assert_eq!(v["hub_params_total"], n);
    assert_eq!(v["hub_params_source"], "api");
    assert_eq!(v["hub_params_by_dtype"]["F16"], n);
    assert_eq!(v["hub_params_difference"], 0);
    assert_eq!(v["hub_note"], Value::Null);
    assert!(v["hub_explanation"][0]
        .as_str()
        .is_some_and(|s| s.contains("agree")));
    // The same model as a pasted config: the config part of the output is identical.
    let (code, pasted, _) = {
        let out = Command::new(env!("CARGO_BIN_EXE_llmcalc"))
            .args([
                "model",
                "--config",
                concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/tests/fixtures/meta-llama__Llama-2-7b-hf.json"
                ),
                "--json",
            ])
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            (),
        )
    };
    assert_eq!(code, Some(0));
    let pasted: Value = serde_json::from_str(&pasted).unwrap_or(Value::Null);
    for k in ["params", "weights_bytes", "kv_bytes_per_token", "ledger"] {
        assert_eq!(v[k], pasted[k], "{k}");
    }
    // Config, then the API; the API had a count, so no index was asked for. Only the id is
    // sent, and no credentials.
    assert_eq!(
        paths(&seen),
        [
            "/acme/counted/resolve/main/config.json",
            "/api/models/acme/counted"
        ]
    );
    assert!(seen
        .lock()
        .map(|v| v.iter().all(|s| !s.credentials))
        .unwrap_or(false));
}

#[test]
fn a_larger_checkpoint_is_explained_and_text_shows_both() {
    let (base, _) = stub();
    let v = json_of(&base, "acme/tower");
    assert_eq!(v["hub_params_total"], ours() + TOWER);
    assert_eq!(v["hub_params_difference"], TOWER);
    let e = v["hub_explanation"][0].as_str().unwrap_or("");
    assert!(e.contains("more parameters") && e.contains("vision"), "{e}");
    let (code, out, _) = llmcalc(&base, "https://huggingface.co/acme/tower", &[]);
    assert_eq!(code, 0);
    assert!(out.contains(&group(ours() + TOWER)), "{out}");
    assert!(
        out.contains(&format!("calculator: {}", group(ours()))),
        "{out}"
    );
}

#[test]
fn only_an_index_and_no_count_at_all() {
    let (base, seen) = stub();
    let v = json_of(&base, "acme/sharded");
    // total_size ÷ 2 bytes (fp16) gives our count back.
    assert_eq!(v["hub_params_total"], ours());
    assert_eq!(v["hub_params_source"], "index_bytes");
    assert!(v["hub_explanation"][1]
        .as_str()
        .is_some_and(|s| s.contains("total_size")));
    assert!(paths(&seen)
        .iter()
        .any(|p| p == "/acme/sharded/resolve/main/model.safetensors.index.json"));
    let v = json_of(&base, "acme/nocount");
    assert_eq!(v["hub_params_total"], Value::Null);
    assert_eq!(v["params_total"], ours());
    assert!(v["hub_note"]
        .as_str()
        .is_some_and(|s| s.contains("no safetensors parameter count")));
    // The API's answer is broken: the config still counts, the note says why there is no count.
    let v = json_of(&base, "acme/badapi");
    assert_eq!(v["params_total"], ours());
    assert!(v["hub_note"]
        .as_str()
        .is_some_and(|s| s.contains("api/models")));
}

#[test]
fn failures_are_one_sentence_with_exit_2() {
    let (base, seen) = stub();
    let cases = [
        ("acme/gated", "Accept the licence"),
        ("acme/missing", "has no config.json for acme/missing"),
        ("acme/malformed", "not valid JSON"),
        ("acme/huge", "larger than 2,097,152 bytes"),
        ("../../etc/passwd", "not a Hugging Face model id"),
        ("https://evil.example/acme/x", "only huggingface.co"),
    ];
    for (id, says) in cases {
        let (code, out, err) = llmcalc(&base, id, &["--json"]);
        assert_eq!(code, 2, "{id}");
        assert!(out.is_empty(), "{id}: {out}");
        assert_eq!(err.lines().count(), 1, "{id}: {err}");
        assert!(err.contains(says), "{id}: {err}");
    }
    // A refused id is never sent; a gated config stops before the API is asked.
    let p = paths(&seen);
    assert!(
        p.iter().all(|p| !p.contains("etc") && !p.contains("evil")),
        "{p:?}"
    );
    assert!(!p.iter().any(|p| p == "/api/models/acme/gated"), "{p:?}");
}

#[test]
fn slow_and_offline() {
    let (base, _) = stub();
    let t = Instant::now();
    let (code, _, err) = llmcalc(&base, "acme/slow", &[]);
    assert_eq!(code, 2);
    assert!(err.contains("did not answer within 1 s"), "{err}");
    assert!(t.elapsed() < SLOW, "gave up after {:?}", t.elapsed());
    // A port nobody listens on: a listener is bound, its port read, and it is closed.
    let closed = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| format!("http://{a}"))
        .unwrap_or_default();
    let (code, _, err) = llmcalc(&closed, "acme/counted", &[]);
    assert_eq!(code, 2);
    assert!(err.contains("could not be reached"), "{err}");
    let (code, _, err) = llmcalc("ftp://x", "acme/counted", &[]);
    assert_eq!(code, 2);
    assert!(err.contains("HF_ENDPOINT"), "{err}");
}

/// The shipped page lets the app connect to its own files and to huggingface.co, nothing
/// else, and names no other Hub endpoint (only the e2e test's copy of the page has one).
#[test]
fn the_shipped_page_allows_only_the_hub() {
    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/index.html"))
        .unwrap_or_default();
    let csp = page
        .split("http-equiv=\"Content-Security-Policy\" content=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap_or("");
    let directive = |name: &str| {
        csp.split(';')
            .map(str::trim)
            .find_map(|d| d.strip_prefix(name))
            .map(|v| v.split_whitespace().collect::<Vec<_>>())
    };
    assert_eq!(
        directive("connect-src "),
        Some(vec!["'self'", "https://huggingface.co"]),
        "{csp}"
    );
    // No other directive opens a way to the network beyond the page's own origin.
    assert_eq!(directive("default-src "), Some(vec!["'self'"]), "{csp}");
    assert!(
        !csp.contains("http://") && csp.matches("https://").count() == 1,
        "{csp}"
    );
    assert!(!page.contains("hf-endpoint"));
}
