//! Tests only: the check of a file made from the code and compiled in (the first-answer
//! module's stored presets and catalog), and its rewrite on request.

/// Fails unless `compiled` (the file as compiled in) is `made` (what the code makes today);
/// with the environment variable `var` set, rewrites `path` (relative to the repository) from
/// `made` instead and returns false, so the caller skips its other checks. `test` names the
/// test to run for the rewrite.
pub fn check_or_write(compiled: &[u8], made: &[u8], path: &str, var: &str, test: &str) -> bool {
    if std::env::var_os(var).is_some() {
        let file = format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"));
        std::fs::write(&file, made).unwrap_or_else(|e| panic!("cannot write {file}: {e}"));
        return false;
    }
    assert!(
        compiled == made,
        "{path} is not what the code makes today: run {var}=1 cargo test -p llmcalc-core --lib {test}"
    );
    true
}
