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
                // SQLite's C API, for the few statements a bulk apply runs per change (GRDBStore/SQLite/SQLiteStatement.swift).
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
            dependencies: ["FolderSync", "FolderSyncWebDAV", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                           .product(name: "Crypto", package: "swift-crypto")],
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
            dependencies: ["FolderSync", "FolderSyncTesting", "TestProcesses", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Tests/TestWorker",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "foldersync-bench",
            dependencies: ["FolderSync", "FolderSyncWebDAV", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Benchmarks/FolderSyncBench",
            swiftSettings: strict
        ),
        .testTarget(
            name: "FolderSyncTests",
            dependencies: ["FolderSync", "FolderSyncTesting", "FolderSyncWebDAV", "S3Backend", "foldersync", "TestProcesses", .product(name: "GRDB", package: "GRDB.swift"),
                           .product(name: "Crypto", package: "swift-crypto")],
            exclude: ["Snapshots"],   // read from the checkout (FoldersyncTool.swift), so that they can be re-recorded
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
