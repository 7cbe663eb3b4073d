//! The image `plimsoll k8s` renders by default is the one the repository's Dockerfile
//! builds. No container engine runs where the tests run, so the Dockerfile is read, not
//! built: its build stage must build what `cargo build --release --locked -p plimsoll`
//! builds, with a toolchain at least the workspace's `rust-version`; its final stage
//! must run the binary as a user that is not root; and the tag `plimsoll k8s` names by
//! default must be the one the Dockerfile says to build.

mod common;

use common::{root, BIN};
use std::process::Command;

fn dockerfile() -> String {
    std::fs::read_to_string(root().join("Dockerfile")).expect("the repository has a Dockerfile")
}

/// The instructions of each stage, continuation lines joined.
fn stages(text: &str) -> Vec<Vec<String>> {
    let joined = text.replace("\\\n", " ");
    let mut out: Vec<Vec<String>> = Vec::new();
    for line in joined.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with("FROM ") {
            out.push(Vec::new());
        }
        out.last_mut().expect("FROM first").push(line.to_string());
    }
    out
}

#[test]
fn the_dockerfile_builds_the_release_binary_and_runs_it_as_a_user() {
    let text = dockerfile();
    let st = stages(&text);
    assert!(st.len() >= 2, "a multi-stage build: {st:?}");
    let build = &st[0];
    assert!(
        build
            .iter()
            .any(|l| l.starts_with("RUN ")
                && l.contains("cargo build --release --locked -p plimsoll")),
        "{build:?}"
    );
    // The build stage's toolchain is at least the workspace's rust-version.
    let from = &build[0];
    let tag = from.split(':').nth(1).unwrap_or_default();
    let version: Vec<u32> = tag
        .split('-')
        .next()
        .unwrap()
        .split('.')
        .map(|x| x.parse().unwrap())
        .collect();
    let cargo = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let want = cargo
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = "))
        .unwrap()
        .trim_matches('"');
    let want: Vec<u32> = want.split('.').map(|x| x.parse().unwrap()).collect();
    assert!(
        version >= want,
        "{from} is older than rust-version {want:?}"
    );
    let last = st.last().unwrap();
    assert!(
        last[0].contains("-slim"),
        "a small final image: {}",
        last[0]
    );
    assert!(
        last.iter()
            .any(|l| l.starts_with("COPY --from=") && l.ends_with("/usr/local/bin/plimsoll")),
        "{last:?}"
    );
    let user = last
        .iter()
        .rev()
        .find_map(|l| l.strip_prefix("USER "))
        .expect("a USER");
    assert!(
        !user.starts_with('0') && !user.starts_with("root"),
        "{user}"
    );
    assert!(
        last.iter().any(|l| l == r#"ENTRYPOINT ["plimsoll"]"#),
        "{last:?}"
    );
    // What the build stage copies must not drag the workstation's build or venvs in.
    let ignore = std::fs::read_to_string(root().join(".dockerignore")).unwrap();
    for never in ["target/", ".git/", "**/.venv"] {
        assert!(
            ignore.lines().any(|l| l == never),
            "{never} in .dockerignore"
        );
    }
}

#[test]
fn k8s_renders_the_dockerfile_s_image_by_default_and_says_how_to_build_it() {
    let tag = format!("plimsoll:{}", env!("CARGO_PKG_VERSION"));
    assert!(
        dockerfile().contains(&format!("docker build -t {tag} .")),
        "the Dockerfile says to build {tag}"
    );
    let out = Command::new(BIN)
        .args([
            "k8s",
            "--shards",
            "2",
            "--target",
            "http://agent:8080",
            "--run-id",
            "r-img",
        ])
        .arg("--config")
        .arg(root().join("examples/floor/plimsoll.toml"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(&format!(
            "Image: {tag} — the repository's Dockerfile: docker build -t {tag} ."
        )),
        "{}",
        &text[..text.len().min(800)]
    );
    assert!(
        text.contains(&format!("\"image\":\"{tag}\""))
            || text.contains(&format!("\"image\": \"{tag}\""))
    );
}
