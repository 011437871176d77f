import Foundation
import Glibc
import Identity

/// What a resumable upload was created with: where its object goes, how long it is, and the
/// object's metadata, kept beside its bytes in `<version>.json` (written once).
struct ResumableUpload: Codable, Equatable {
    var bucket: String
    var name: String
    var size: Int
    var contentType: String
    var cacheControl: String
    /// The `metadata` entry of `Upload-Metadata`: the user's own metadata, a JSON object's text.
    var userMetadata: String?
    /// `Upload-Metadata` as it was sent (decoded), answered again by HEAD.
    var tusMetadata: [String: String?]
    var upsert: Bool
    /// A signed upload's owner (the token's), else nil: the caller's own id is used.
    var owner: String?
    var signed: Bool
    /// Seconds since 1970.
    var created: Double
}

/// A resumable upload's state on disk, under `STORAGE_DIR/resumable/`: `<version>` holds the
/// bytes received so far (its length is the offset), `<version>.json` the upload, and
/// `<version>.done` marks one whose object was committed (its bytes then are `objects/<version>`).
/// Every write is fsynced, so an upload resumes where it stopped after a restart and on any
/// server that shares the folder; a request holds an exclusive `flock` on `<version>.json` while
/// it appends or commits, so two servers never write one upload at once.
struct ResumableStore: Sendable {
    let folder: String
    let files: FileStore

    init(files: FileStore) throws {
        self.files = files
        let url = files.root.appendingPathComponent("resumable")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        folder = url.path
    }

    enum Failure: Error, Equatable {
        case notFound
        /// Another request holds the upload past the lock's wait.
        case lockTimeout
        case offsetConflict
        case sizeExceeded
        case disk
    }

    /// Is `version` one of ours (32 hex digits, as `FileStore.newVersion` makes)?
    static func isVersion(_ version: String) -> Bool {
        version.utf8.count == 32 && version.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    private func path(_ version: String, _ suffix: String = "") -> String { folder + "/" + version + suffix }

    /// Creates an empty upload; its files are durable when this returns.
    func create(_ upload: ResumableUpload, version: String) throws(Failure) {
        guard let data = try? JSONEncoder().encode(upload) else { throw .disk }
        let temporary = path(version, ".json.tmp")
        guard write(Array(data), to: temporary, flags: O_WRONLY | O_CREAT | O_EXCL), write([], to: path(version), flags: O_WRONLY | O_CREAT | O_EXCL),
            rename(temporary, path(version, ".json")) == 0
        else {
            unlink(temporary)
            unlink(path(version))
            throw .disk
        }
        try syncFolder()
    }

    /// The upload of `version`, when it exists.
    func upload(_ version: String) -> ResumableUpload? {
        guard Self.isVersion(version), let data = FileManager.default.contents(atPath: path(version, ".json")) else { return nil }
        return try? JSONDecoder().decode(ResumableUpload.self, from: data)
    }

    /// Whether the object of `version` was committed.
    func isDone(_ version: String) -> Bool { access(path(version, ".done"), F_OK) == 0 }

    /// The bytes received so far (the whole size once committed).
    func offset(_ version: String, _ upload: ResumableUpload) -> Int? {
        if isDone(version) { return upload.size }
        var info = stat()
        guard stat(path(version), &info) == 0 else { return nil }
        return Int(info.st_size)
    }

    /// Runs `body` holding the upload's exclusive lock (waiting up to `wait` seconds for it).
    func locked<T>(_ version: String, wait: Double = 5, _ body: () throws -> T) throws -> T {
        guard Self.isVersion(version) else { throw Failure.notFound }
        let fd = open(path(version, ".json"), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure.notFound }
        defer { close(fd) }
        let deadline = Date().addingTimeInterval(wait)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, Date() < deadline else { throw Failure.lockTimeout }
            usleep(10_000)
        }
        defer { flock(fd, LOCK_UN) }
        // A removal between the open and the lock leaves the open file without a name.
        guard access(path(version, ".json"), F_OK) == 0 else { throw Failure.notFound }
        return try body()
    }

    /// Appends `bytes` at `offset` (the upload's current length, else `offsetConflict`), fsynced;
    /// answers the new offset. Call it holding the lock.
    func append(_ version: String, _ upload: ResumableUpload, at offset: Int, _ bytes: [UInt8]) throws(Failure) -> Int {
        let fd = open(path(version), O_WRONLY | O_APPEND | O_CLOEXEC)
        guard fd >= 0 else { throw .notFound }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .disk }
        guard Int(info.st_size) == offset else { throw .offsetConflict }
        guard offset + bytes.count <= upload.size else { throw .sizeExceeded }
        guard FileStore.writeAll(fd, bytes), fsync(fd) == 0 else {
            // A short append is cut back, so the offset stays what the client was told.
            _ = ftruncate(fd, off_t(offset))
            throw .disk
        }
        return offset + bytes.count
    }

    /// The SHA-256 of the complete bytes, read a megabyte at a time.
    func digest(_ version: String) throws(Failure) -> [UInt8] {
        let fd = open(path(version), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .notFound }
        defer { close(fd) }
        let hasher = SHA256Stream()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw .disk }
            if count == 0 { break }
            buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }
        return hasher.finish()
    }

    /// Moves the complete bytes to `objects/<version>` (the object's file). Call it holding the lock.
    func promote(_ version: String) throws(Failure) {
        guard rename(path(version), files.path(of: version)) == 0 else { throw .disk }
    }

    /// Marks the upload's object committed.
    func markDone(_ version: String) {
        _ = write([], to: path(version, ".done"), flags: O_WRONLY | O_CREAT)
        try? syncFolder()
    }

    /// Removes the upload's files (not a committed object's bytes).
    func remove(_ version: String) {
        guard Self.isVersion(version) else { return }
        unlink(path(version))
        unlink(path(version, ".done"))
        unlink(path(version, ".json"))
    }

    /// Removes the uploads created more than `seconds` ago that no request holds (abandoned
    /// ones and the records of committed ones), and temporaries a crash left.
    func removeExpired(olderThan seconds: Double, now: Date = Date()) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        for name in names where name.hasSuffix(".json") || name.hasSuffix(".json.tmp") {
            let version = String(name.prefix(while: { $0 != "." }))
            guard Self.isVersion(version), let modified = (try? FileManager.default.attributesOfItem(atPath: folder + "/" + name))?[.modificationDate] as? Date,
                now.timeIntervalSince(modified) > seconds
            else { continue }
            if name.hasSuffix(".tmp") {
                unlink(folder + "/" + name)
                continue
            }
            _ = try? locked(version, wait: 0) { remove(version) }
        }
    }

    private func write(_ bytes: [UInt8], to path: String, flags: Int32) -> Bool {
        let fd = open(path, flags | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            written += count
        }
        return fsync(fd) == 0
    }

    private func syncFolder() throws(Failure) {
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .disk }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw .disk }
    }
}
