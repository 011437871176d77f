// swift-tools-version: 6.0
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

// Linux only: the HTTP server is built on epoll and Glibc, the embedded cluster on the system's
// PostgreSQL binaries (Debian's paths).
let package = Package(
    name: "onboard",
    products: [
        .executable(name: "onboard", targets: ["onboard"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2")
    ],
    targets: [
        // C: only Postgres sees libpq.
        .systemLibrary(name: "CPostgres", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // C: libcrypto for Identity's tokens (and libxcrypt's bcrypt) and for the WebSocket handshake's SHA-1; libssl for the SMTP client's TLS.
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev", "libcrypt-dev"])]),
        // C: zlib, for the gzip bodies PostHog's SDKs send (only Analytics sees it).
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),

        // The epoll loop that the HTTP server and the pipelined database connections share, and
        // `startThread`, which starts every thread of the server.
        .target(name: "EventLoop", dependencies: ["CSystemLinux"], swiftSettings: swiftSettings),
        .target(name: "Postgres", dependencies: ["CPostgres", "EventLoop"], swiftSettings: swiftSettings),
        .target(name: "EmbeddedPostgres", swiftSettings: swiftSettings),
        .target(name: "Identity", dependencies: ["COpenSSL"], swiftSettings: swiftSettings),
        // C: epoll, which Glibc's module does not export.
        .systemLibrary(name: "CSystemLinux"),
        .target(
            name: "HTTP", dependencies: ["CSystemLinux", "COpenSSL", "EventLoop", .product(name: "Logging", package: "swift-log")], swiftSettings: swiftSettings
        ),
        .target(name: "Migrations", dependencies: ["Postgres"], swiftSettings: swiftSettings),
        .target(name: "REST", dependencies: ["HTTP", "Postgres", "Identity"], swiftSettings: swiftSettings),
        // `onboard gen types`: the schema cache (and the catalog beside it) as Swift, TypeScript and Python types.
        .target(name: "TypeGen", dependencies: ["REST", "Postgres"], swiftSettings: swiftSettings),
        .target(
            name: "Auth", dependencies: ["EventLoop", "HTTP", "Postgres", "Identity", "COpenSSL", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings),
        .target(
            name: "Realtime", dependencies: ["EventLoop", "HTTP", "Postgres", "Identity", "REST", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings),
        // Supabase Storage's API: buckets and objects under row-level security, bytes on disk.
        .target(
            name: "Storage", dependencies: ["HTTP", "Postgres", "Identity", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings),
        // Product analytics: PostHog's capture and flags protocols over PostgreSQL.
        .target(name: "Analytics", dependencies: ["CZlib", "HTTP", "Postgres", "Identity"], swiftSettings: swiftSettings),
        .target(
            name: "App",
            dependencies: [
                "Postgres", "Migrations", "EmbeddedPostgres", "EventLoop", "HTTP", "Identity", "REST", "Auth", "Realtime", "Storage", "Analytics",
                .product(name: "Logging", package: "swift-log")
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "onboard",
            dependencies: [
                "App", "Analytics", "Auth", "Migrations", "Postgres", "Identity", "HTTP", "REST", "TypeGen",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log")
            ],
            swiftSettings: swiftSettings
        ),
        // libFuzzer's driver over the whole request path short of I/O (fuzz/run.sh); a plain
        // build replays input files through the same path.
        .executableTarget(name: "RequestFuzz", dependencies: ["App", "HTTP", "Identity", "REST", "Auth", "Realtime"], swiftSettings: swiftSettings),
        .target(
            name: "TestSupport",
            dependencies: [
                "App", "COpenSSL", "EmbeddedPostgres", "Migrations", "Postgres", "HTTP", "Identity", .product(name: "Logging", package: "swift-log")
            ],
            swiftSettings: swiftSettings
        ),

        .testTarget(name: "HTTPTests", dependencies: ["HTTP", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "RESTTests", dependencies: ["REST", "HTTP", "Identity", "Postgres", "App"], swiftSettings: swiftSettings),
        .testTarget(name: "RESTIntegrationTests", dependencies: ["REST", "Postgres", "Identity", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "IdentityTests", dependencies: ["Identity"], swiftSettings: swiftSettings),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres", "EventLoop", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "MigrationsTests", dependencies: ["Migrations", "EmbeddedPostgres", "Postgres", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "TestSupport", "Postgres", "Identity", "HTTP", "Auth", "App", "Realtime", "Storage", "Analytics",
                .product(name: "Logging", package: "swift-log")
            ],
            swiftSettings: swiftSettings),
        .testTarget(name: "TypeGenTests", dependencies: ["TypeGen", "REST", "Postgres", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "SchemaTests", dependencies: ["Postgres", "TestSupport"], exclude: ["sql"], swiftSettings: swiftSettings)
    ],
    swiftLanguageModes: [.v6]
)
