//! The C allocator's settings for a sweep's pattern of allocations.
//!
//! A sweep allocates buffers of megabytes and frees them again, over and over: each history's
//! rows (2 400 rows for `experiments/noise.toml`) and each Parquet row group's
//! columns (2¹⁸ values apiece). With glibc's defaults the larger ones are mapped fresh and
//! unmapped when freed, and the heap is trimmed back to the system, so every row group's
//! columns were new pages the kernel had to fault in and zero: on a 3.6 M-cell sweep 0.7 s of
//! system time in 3.8 s. Kept in the heap (mapping only above 32 MiB, trimming only above
//! 128 MiB free) they are reused: system time 0.2 s, wall 3.45 s. More threads than arenas
//! cost nothing here (the hot loop does not allocate), and an arena per core rather than
//! glibc's eight per core keeps the peak where it was (measured 338 MiB against 330 MiB; the
//! main job 292 MiB against 314 MiB).

/// Sets the allocator up for a sweep; a no-op off glibc.
pub fn tune() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let arenas = libc::c_int::try_from(cores.max(2)).unwrap_or(libc::c_int::MAX);
        // SAFETY: `mallopt` only sets the allocator's parameters; it is called before the
        // program has started any thread, and a value it refuses is left at its default.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
            libc::mallopt(libc::M_TRIM_THRESHOLD, 128 << 20);
            libc::mallopt(libc::M_ARENA_MAX, arenas);
        }
    }
}
