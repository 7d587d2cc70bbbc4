//! What the machine offers a run: the memory this process may still take (`MemAvailable`, its
//! cgroup's limits, `RLIMIT_AS`) and the free space of the output folder's filesystem; and
//! sizes written for people.

use std::path::Path;

/// Where the cgroup file system is mounted.
pub(crate) const CGROUP_ROOT: &str = "/sys/fs/cgroup";

/// The memory this process may still take, and what sets it: the smallest of `MemAvailable`,
/// the room left under its cgroup's limit (v2 `memory.max`, v1 `memory.limit_in_bytes`, the
/// limits of the cgroups above it included: a Slurm `--mem`, a Kubernetes limit) and the room
/// left under its address-space limit (`RLIMIT_AS`, `ulimit -v`). `None` when none is known.
pub fn machine_memory(cgroup_root: &Path) -> Option<(u64, String)> {
    let mut found: Vec<(u64, String)> = Vec::new();
    if let Some(b) = mem_available() {
        found.push((
            b,
            "the memory available (MemAvailable in /proc/meminfo)".into(),
        ));
    }
    let membership = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    if let Some(c) = cgroup_room(cgroup_root, &membership) {
        found.push(c);
    }
    if let Some(r) = address_space_room() {
        found.push(r);
    }
    found.into_iter().min_by_key(|(b, _)| *b)
}

/// The room left under the memory limit of the cgroup `membership` (the text of
/// /proc/self/cgroup) names, under `root`: the tightest of its own and its ancestors'.
pub fn cgroup_room(root: &Path, membership: &str) -> Option<(u64, String)> {
    let read = |p: &Path| -> Option<u64> { std::fs::read_to_string(p).ok()?.trim().parse().ok() };
    let mut best: Option<(u64, String)> = None;
    for line in membership.lines() {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        let relative = path.trim_start_matches('/');
        // v2: the unified hierarchy; v1: the memory controller's own.
        let (base, limit_file, usage_file) = if controllers.is_empty() {
            (root.to_path_buf(), "memory.max", "memory.current")
        } else if controllers.split(',').any(|c| c == "memory") {
            (
                root.join("memory"),
                "memory.limit_in_bytes",
                "memory.usage_in_bytes",
            )
        } else {
            continue;
        };
        let mut at = base.join(relative);
        loop {
            // "max" (v2) does not parse: no limit at this level; v1's "no limit" is a figure
            // near 2^63, which never wins.
            if let Some(limit) = read(&at.join(limit_file)) {
                let used = read(&at.join(usage_file)).unwrap_or(0);
                let room = limit.saturating_sub(used);
                if best.as_ref().is_none_or(|(b, _)| room < *b) {
                    best = Some((
                        room,
                        format!(
                            "the room left under the cgroup's memory limit ({} of {}, {} in use)",
                            at.join(limit_file).display(),
                            size(limit),
                            size(used)
                        ),
                    ));
                }
            }
            if at == base || !at.pop() {
                break;
            }
        }
    }
    best
}

/// The room left under `RLIMIT_AS` (the address-space limit, `ulimit -v`), when one is set:
/// the limit less the process's address space now (`VmSize`).
#[cfg(unix)]
fn address_space_room() -> Option<(u64, String)> {
    let mut limit: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: `limit` is a valid, writable rlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } != 0
        || limit.rlim_cur == libc::RLIM_INFINITY
    {
        return None;
    }
    #[allow(clippy::unnecessary_cast)] // the field type differs between platforms
    let cap = limit.rlim_cur as u64;
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let used = status
        .lines()
        .find(|l| l.starts_with("VmSize:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |kib| kib.saturating_mul(1024));
    Some((
        cap.saturating_sub(used),
        format!(
            "the room left under the address-space limit (RLIMIT_AS, ulimit -v: {} of which {} in use)",
            size(cap),
            size(used)
        ),
    ))
}

#[cfg(not(unix))]
fn address_space_room() -> Option<(u64, String)> {
    None
}

/// A size for people: `812 B`, `3.4 KiB`, `1.2 GiB`.
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut x = bytes as f64 / 1024.0;
    let mut unit = 0;
    while x >= 1024.0 && unit + 1 < UNITS.len() {
        x /= 1024.0;
        unit += 1;
    }
    format!("{x:.1} {}", UNITS[unit])
}

/// `MemAvailable` of /proc/meminfo, in bytes (Linux only).
fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The free space (for an unprivileged user) of the filesystem that holds `path`, or its
/// nearest existing ancestor (the output folder may not exist yet), and that folder.
#[cfg(unix)]
pub(crate) fn free_space(path: &Path) -> Option<(u64, std::path::PathBuf)> {
    use std::os::unix::ffi::OsStrExt as _;
    let absolute = std::path::absolute(path).ok()?;
    let existing = absolute.ancestors().find(|p| p.exists())?.to_path_buf();
    let c = std::ffi::CString::new(existing.as_os_str().as_bytes()).ok()?;
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `stat` a valid, writable statvfs.
    if unsafe { libc::statvfs(c.as_ptr(), &mut stat) } != 0 {
        return None;
    }
    #[allow(clippy::unnecessary_cast)] // the field types differ between platforms
    let free = (stat.f_bavail as u64).checked_mul(stat.f_frsize as u64)?;
    Some((free, existing))
}

#[cfg(not(unix))]
pub(crate) fn free_space(_: &Path) -> Option<(u64, std::path::PathBuf)> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cgroup_limits_are_read_at_every_level_v2_and_v1() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        let job = r.join("slurm/job_7");
        std::fs::create_dir_all(&job).unwrap();
        std::fs::write(r.join("slurm/memory.max"), "max\n").unwrap();
        std::fs::write(job.join("memory.max"), "1073741824\n").unwrap();
        std::fs::write(job.join("memory.current"), "268435456\n").unwrap();
        let (room, what) = cgroup_room(r, "0::/slurm/job_7\n").unwrap();
        assert_eq!(room, 768 << 20);
        assert!(
            what.contains("job_7/memory.max of 1.0 GiB, 256.0 MiB in use"),
            "{what}"
        );
        // A tighter parent wins.
        std::fs::write(r.join("slurm/memory.max"), "536870912\n").unwrap();
        assert_eq!(cgroup_room(r, "0::/slurm/job_7\n").unwrap().0, 512 << 20);
        // v1: the memory controller's hierarchy; "no limit" is a figure near 2^63.
        let v1 = r.join("memory/pod");
        std::fs::create_dir_all(&v1).unwrap();
        std::fs::write(v1.join("memory.limit_in_bytes"), "2147483648").unwrap();
        std::fs::write(v1.join("memory.usage_in_bytes"), "1073741824").unwrap();
        std::fs::write(
            r.join("memory/memory.limit_in_bytes"),
            "9223372036854771712",
        )
        .unwrap();
        assert_eq!(
            cgroup_room(r, "12:cpu,cpuacct:/pod\n4:memory:/pod\n")
                .unwrap()
                .0,
            1 << 30
        );
        assert_eq!(cgroup_room(r, "3:cpu:/pod\n"), None);
    }
}
