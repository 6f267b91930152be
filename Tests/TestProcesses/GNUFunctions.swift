#if canImport(Glibc)
import Glibc
#endif

/// glibc functions that Swift's Glibc module leaves out (glibc declares them only under `_GNU_SOURCE`), found by
/// name at run time rather than through a C target of their own.
enum GNUFunctions {
    /// `pipe2(2)`, which makes both ends close-on-exec at once: with `pipe` and then `fcntl`, a child spawned by
    /// another thread in between would inherit them.
    static let pipe2 = lookUp("pipe2", as: (@convention(c) (UnsafeMutablePointer<Int32>?, Int32) -> Int32).self)!

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34 and later), which closes every descriptor from a
    /// number up in the child; `nil` with an older glibc.
    static let addCloseFrom = lookUp(
        "posix_spawn_file_actions_addclosefrom_np",
        as: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32).self)

    private static func lookUp<Function>(_ name: String, as type: Function.Type) -> Function? {
        // A nil handle is glibc's RTLD_DEFAULT: the symbol as the program's own code would see it.
        dlsym(nil, name).map { unsafeBitCast($0, to: type) }
    }
}
