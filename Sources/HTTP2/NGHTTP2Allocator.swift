@preconcurrency import Glibc
package import CNGHTTP2

/// A per-session small-block allocator for nghttp2 (`nghttp2_session_client_new3`, `nghttp2_session_server_new3`).
/// With 100+ streams in flight, nghttp2's per-stream allocations (stream, outbound items, copied header arrays, frame
/// buffers, received header buffers) are freed in bursts larger than glibc's per-thread cache, so most went through
/// `_int_malloc`/`_int_free`. Here freed blocks go onto a free list per power-of-two size class (32 B … 4 KiB), with
/// a bounded count, and are reused at once. Larger requests go to `malloc`. Every block has a 16-byte header (class
/// index, usable size), keeping 16-byte alignment.
///
/// - Important: Loop-thread only (nghttp2 calls it from the session's thread). It must outlive its session:
///   `nghttp2_session_del` returns every block, and `deinit` releases the free lists.
package final class NGHTTP2Allocator {
    private static let headerSize = 16
    private static let classCount = 8
    private static let smallestShift = 5  // 32 bytes
    private static let maxCachedPerClass = 2048

    /// Free-list heads (`classCount` pointers) then counts (`classCount` Ints). This raw block, not the object, is
    /// nghttp2's `mem_user_data`, so the callbacks do no reference counting.
    private let state: UnsafeMutableRawPointer

    package init() {
        state = .allocate(byteCount: 2 * Self.classCount * 8, alignment: 8)
        state.initializeMemory(as: UInt8.self, repeating: 0, count: 2 * Self.classCount * 8)
    }

    deinit {
        let heads = state.assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        for index in 0..<Self.classCount {
            var block = heads[index]
            while let current = block {
                block = current.load(as: UnsafeMutableRawPointer?.self)
                Glibc.free(current - Self.headerSize)
            }
        }
        state.deallocate()
    }

    /// The `nghttp2_mem` to pass to `nghttp2_session_client_new3` or `nghttp2_session_server_new3` (copied by
    /// nghttp2). `self` must outlive the session.
    package var mem: nghttp2_mem {
        nghttp2_mem(mem_user_data: state, malloc: nghttp2AllocatorMalloc, free: nghttp2AllocatorFree,
                    calloc: nghttp2AllocatorCalloc, realloc: nghttp2AllocatorRealloc)
    }

    /// Size class for `size` bytes, or -1 when larger than the biggest class.
    private static func sizeClass(_ size: Int) -> Int {
        if size <= 1 << smallestShift { return 0 }
        let shift = Int.bitWidth - (size - 1).leadingZeroBitCount  // ceil(log2(size))
        let index = shift - smallestShift
        return index < classCount ? index : -1
    }

    static func allocate(_ state: UnsafeMutableRawPointer, _ size: Int) -> UnsafeMutableRawPointer? {
        let heads = state.assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        let counts = (state + classCount * 8).assumingMemoryBound(to: Int.self)
        let index = sizeClass(size)
        if index >= 0, let block = heads[index] {
            heads[index] = block.load(as: UnsafeMutableRawPointer?.self)
            counts[index] -= 1
            return block
        }
        let usable = index >= 0 ? 1 << (index + smallestShift) : size
        guard let raw = Glibc.malloc(headerSize + usable) else { return nil }
        raw.storeBytes(of: index, as: Int.self)
        raw.storeBytes(of: usable, toByteOffset: 8, as: Int.self)
        return raw + headerSize
    }

    static func release(_ state: UnsafeMutableRawPointer, _ pointer: UnsafeMutableRawPointer?) {
        guard let pointer else { return }
        let heads = state.assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        let counts = (state + classCount * 8).assumingMemoryBound(to: Int.self)
        let raw = pointer - headerSize
        let index = raw.load(as: Int.self)
        if index >= 0 && counts[index] < maxCachedPerClass {
            pointer.storeBytes(of: heads[index], as: UnsafeMutableRawPointer?.self)
            heads[index] = pointer
            counts[index] += 1
            return
        }
        Glibc.free(raw)
    }

    static func reallocate(_ state: UnsafeMutableRawPointer, _ pointer: UnsafeMutableRawPointer?,
                           _ size: Int) -> UnsafeMutableRawPointer? {
        guard let pointer else { return allocate(state, size) }
        let usable = (pointer - headerSize).load(fromByteOffset: 8, as: Int.self)
        if size <= usable { return pointer }
        guard let grown = allocate(state, size) else { return nil }  // the old block stays valid, as realloc requires
        grown.copyMemory(from: pointer, byteCount: usable)
        release(state, pointer)
        return grown
    }
}

private let nghttp2AllocatorMalloc: nghttp2_malloc = { size, state in
    NGHTTP2Allocator.allocate(state!, size)
}

private let nghttp2AllocatorFree: nghttp2_free = { pointer, state in
    NGHTTP2Allocator.release(state!, pointer)
}

private let nghttp2AllocatorCalloc: nghttp2_calloc = { count, size, state in
    let (total, overflow) = count.multipliedReportingOverflow(by: size)
    if overflow { return nil }
    guard let pointer = NGHTTP2Allocator.allocate(state!, total) else { return nil }
    pointer.initializeMemory(as: UInt8.self, repeating: 0, count: total)
    return pointer
}

private let nghttp2AllocatorRealloc: nghttp2_realloc = { pointer, size, state in
    NGHTTP2Allocator.reallocate(state!, pointer, size)
}
