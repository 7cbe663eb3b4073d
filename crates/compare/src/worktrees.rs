//! The two builds of a `--base REF --branch REF` comparison: git worktrees of the SUT's
//! repository, each built, both removed when dropped.

/// Two git worktrees of the SUT's repository, built, removed when dropped.
pub struct Worktrees {
    repo: std::path::PathBuf,
    pub dirs: [std::path::PathBuf; 2],
}

impl Worktrees {
    pub fn create(
        repo: &std::path::Path,
        base: &str,
        branch: &str,
        build: Option<&str>,
    ) -> anyhow::Result<Worktrees> {
        use anyhow::Context;
        let root = std::env::temp_dir().join(format!("plimsoll-compare-{}", std::process::id()));
        let dirs = [root.join("base"), root.join("branch")];
        guard::add(&guard::Item::Dir(root.clone()));
        let git = |args: &[&str]| -> anyhow::Result<()> {
            let o = std::process::Command::new("git")
                .arg("-C")
                .arg(repo)
                .args(args)
                .output()
                .context("running git")?;
            if !o.status.success() {
                anyhow::bail!(
                    "git {}: {}",
                    args.join(" "),
                    String::from_utf8_lossy(&o.stderr).trim()
                );
            }
            Ok(())
        };
        let wt = Worktrees {
            repo: repo.to_path_buf(),
            dirs: dirs.clone(),
        };
        for (dir, rev) in dirs.iter().zip([base, branch]) {
            git(&[
                "worktree",
                "add",
                "--detach",
                &dir.display().to_string(),
                rev,
            ])
            .with_context(|| {
                format!(
                    "checking out {rev:?} of {} (is it a git repository with that ref?)",
                    repo.display()
                )
            })?;
            if let Some(cmd) = build {
                eprintln!("building {rev} in {}: {cmd}", dir.display());
                let st = std::process::Command::new("sh")
                    .args(["-c", cmd])
                    .current_dir(dir)
                    .status()?;
                if !st.success() {
                    anyhow::bail!("the build of {rev:?} failed ({st}): {cmd}");
                }
            }
        }
        Ok(wt)
    }
}

impl Drop for Worktrees {
    fn drop(&mut self) {
        for d in &self.dirs {
            let _ = std::process::Command::new("git")
                .arg("-C")
                .arg(&self.repo)
                .args(["worktree", "remove", "--force"])
                .arg(d)
                .output();
        }
        if let Some(root) = self.dirs[0].parent() {
            let _ = std::fs::remove_dir_all(root);
            guard::remove(&guard::Item::Dir(root.to_path_buf()));
        }
    }
}
