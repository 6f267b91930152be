// swift-tools-version:6.0
import PackageDescription

// The upcoming features swift-log builds with, but NonisolatedNonsendingByDefault: under it a nonisolated async
// function runs on its caller's actor, so `synchronize()` awaited by a @MainActor view model would run its
// SQLite work on the main thread; the library's entry points keep running on the concurrency pool.
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "FolderSync",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "FolderSync", targets: ["FolderSync"]),
        .library(name: "FolderSyncTesting", targets: ["FolderSyncTesting"]),
        .library(name: "FolderSyncWebDAV", targets: ["FolderSyncWebDAV"]),
        .executable(name: "notes", targets: ["Notes"]),
        .executable(name: "todo", targets: ["Todo"]),
        .executable(name: "foldersync", targets: ["foldersync"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
    ],
    targets: [
        .systemLibrary(name: "CZlib", path: "Sources/CZlib"),
        // libcurl for the WebDAV transport on Linux (Sources/CCurl/shim.h says why not URLSession there).
        .systemLibrary(name: "CCurl", path: "Sources/CCurl"),
        .target(
            name: "CFileSystem",
            path: "Sources/CFileSystem"
        ),
        .target(
            name: "FolderSync",
            dependencies: [
                "CZlib", "CFileSystem",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, for the few statements a bulk apply runs per change
                // (GRDBStore/SQLite/SQLiteStatement.swift).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "FolderSyncWebDAV",
            dependencies: ["FolderSync", .target(name: "CCurl", condition: .when(platforms: [.linux]))],
            swiftSettings: strict
        ),
        .target(
            name: "FolderSyncTesting",
            dependencies: ["FolderSync"],
            swiftSettings: strict
        ),
        .target(
            name: "S3Backend",
            dependencies: ["FolderSync", "FolderSyncWebDAV", .product(name: "Crypto", package: "swift-crypto")],
            path: "Examples/S3Backend",
            exclude: ["README.md"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "Notes",
            dependencies: [
                "FolderSync", "FolderSyncWebDAV",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Examples/Notes",
            exclude: ["README.md"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "Todo",
            dependencies: [
                "FolderSync", "FolderSyncWebDAV",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Examples/Todo",
            exclude: ["README.md"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "foldersync",
            dependencies: [
                "FolderSync", "FolderSyncWebDAV", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Sources/foldersync",
            swiftSettings: strict
        ),
        // Child processes for the tests and the test worker, without Foundation's Process (see Subprocess.swift).
        .target(
            name: "TestProcesses",
            path: "Tests/TestProcesses",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "foldersync-test-worker",
            dependencies: [
                "FolderSync", "FolderSyncTesting", "TestProcesses", .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Tests/TestWorker",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "foldersync-bench",
            dependencies: ["FolderSync", "FolderSyncWebDAV", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Benchmarks/FolderSyncBench",
            swiftSettings: strict
        ),
        // The tests, by tier; `scripts/test` runs TimedTests first on their own, then the rest, with the servers up.
        // What the test targets share: clients, fixtures, folders, the servers' locations, the built tools. A test
        // target itself, so that only test builds (debug, testable) compile it; the test targets import it with
        // `@testable`, as they import FolderSync, because its helpers speak FolderSync's internal types.
        .testTarget(
            name: "TestSupport",
            dependencies: [
                "FolderSync", "FolderSyncTesting", "FolderSyncWebDAV", "S3Backend", "TestProcesses",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/TestSupport",
            swiftSettings: strict
        ),
        // In one process, no server, no child process: `swift test --filter UnitTests` on a fresh clone.
        .testTarget(
            name: "UnitTests",
            dependencies: [
                "TestSupport", "FolderSync", "FolderSyncTesting", "FolderSyncWebDAV", "S3Backend", "CZlib",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        // In one process, no server, but long: every input of a kind (each golden file with each byte flipped,
        // hostile numbers in every numeric field, every Unicode scalar through the WebDAV text functions).
        .testTarget(
            name: "SweepTests",
            dependencies: [
                "TestSupport", "FolderSync", "FolderSyncTesting", "FolderSyncWebDAV",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        // Several clients at once: in child processes (the built `foldersync`, `notes` and `todo`, the test
        // worker), or in this one where they share those suites' helpers (whole stores passed on, 20 clients ×
        // 10,000 change sets).
        .testTarget(
            name: "MultiClientTests",
            dependencies: [
                "TestSupport", "FolderSync", "FolderSyncTesting", "FolderSyncWebDAV", "foldersync",
                "TestProcesses",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            // Read from the checkout (TestSupport/FoldersyncTool.swift), so that they can be re-recorded.
            exclude: ["Snapshots"],
            swiftSettings: strict
        ),
        // Suites that measure time (timeouts, retries, watching, held requests, a screen awaited in tmux); most
        // need the WebDAV servers. `scripts/test` runs them before everything else, on their own.
        .testTarget(
            name: "TimedTests",
            dependencies: [
                "TestSupport", "FolderSync", "FolderSyncTesting", "FolderSyncWebDAV", "TestProcesses",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strict
        ),
        // Against the WebDAV and S3 servers `scripts/test` starts (without them they fail, saying so), or against
        // wsgidav behind a fault proxy the test starts.
        .testTarget(
            name: "ServerTests",
            dependencies: [
                "TestSupport", "FolderSync", "FolderSyncTesting", "FolderSyncWebDAV", "S3Backend",
                "TestProcesses", .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strict
        ),
        // The seeded suites (the convergence simulator on every remote, clocks years apart, delete policies, the
        // kill torture), which `scripts/soak` runs again on new seeds (it picks them by name). The runs on WebDAV,
        // S3 and a mounted share need the servers; S3BackendTests and MountedShareTests are here whole, for the
        // seeds of SimulatorTests they run.
        .testTarget(
            name: "SoakTests",
            dependencies: [
                "TestSupport", "FolderSync", "FolderSyncTesting", "FolderSyncWebDAV", "S3Backend",
                "TestProcesses", .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
