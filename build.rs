//! Records the git commit the program is built from (when it is built from a git checkout), so
//! that result folders can cite it.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
        .filter(|text| !text.is_empty())
}

fn main() {
    // Rebuild when HEAD moves: HEAD itself (a branch switch) and the ref it points at (a commit).
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
        if let Some(reference) = git(&["symbolic-ref", "-q", "HEAD"]) {
            let common = git(&["rev-parse", "--git-common-dir"]).unwrap_or(dir);
            println!("cargo:rerun-if-changed={common}/{reference}");
        }
    }
    // Uncommitted changes are not detected: the script reruns only when HEAD moves, so a
    // "dirty" mark would go stale.
    if let Some(commit) = git(&["rev-parse", "HEAD"]) {
        println!("cargo:rustc-env=HARNESS_GIT_COMMIT={commit}");
    }
}
