//! Transparent huge pages for the simulator's one large table, the node
//! stacks (1 KiB each). On a field of thousands of nodes a signal edge lands
//! on the state of a receiver somewhere in megabytes of it: with 4 KiB pages
//! each such edge risks a miss of the TLB as well as of the cache; on 2 MiB
//! pages the table needs a handful of TLB entries. Where the machine's
//! `transparent_hugepage` setting is `madvise`, Linux backs memory with huge
//! pages only where a program asks for them, which this does; with `always`
//! the advice changes nothing, and with `never` it is ignored.

/// Tables smaller than one huge page gain nothing from the advice.
const HUGE_PAGE: usize = 2 << 20;

/// An empty vector with room for `n` elements, whose buffer the kernel is
/// asked to back with huge pages. The advice comes before anything is
/// written: pages are backed as they are first touched.
pub fn vec_on_huge_pages<T>(n: usize) -> Vec<T> {
    let v: Vec<T> = Vec::with_capacity(n);
    let bytes = n * std::mem::size_of::<T>();
    if bytes >= HUGE_PAGE {
        advise_huge(v.as_ptr().cast(), bytes);
    }
    v
}

#[cfg(target_os = "linux")]
fn advise_huge(ptr: *const u8, bytes: usize) {
    // SAFETY: `sysconf` only reads a constant of the system. `madvise` with
    // MADV_HUGEPAGE only tells the kernel how to back these pages: it
    // neither frees, moves nor changes any memory. The range is the
    // vector's buffer, widened to the start of its first page, all mapped.
    // The result is ignored: where huge pages are not available, the
    // buffer stays on ordinary pages and nothing else changes.
    unsafe {
        let page = usize::try_from(libc::sysconf(libc::_SC_PAGESIZE)).unwrap_or(4096);
        let start = ptr as usize & !(page - 1);
        libc::madvise(
            start as *mut libc::c_void,
            ptr as usize + bytes - start,
            libc::MADV_HUGEPAGE,
        );
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge(_: *const u8, _: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_for_n_and_nothing_in_it() {
        for n in [0, 1, 3_000, 10_000] {
            let v: Vec<[u8; 1024]> = vec_on_huge_pages(n);
            assert!(v.is_empty() && v.capacity() >= n);
        }
    }
}
