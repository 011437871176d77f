import Foundation

/// The OpenAPI (Swagger 2.0, as PostgREST serves it) description of what is exposed.
enum OpenAPI {
    static func document(_ cache: SchemaCache) -> String {
        var paths: [String: Any] = ["/": ["get": ["summary": "OpenAPI description (this document)", "responses": ["200": ["description": "OK"]]]]]
        var definitions: [String: Any] = [:]
        for table in cache.tables.values.sorted(by: { $0.name < $1.name }) {
            var properties: [String: Any] = [:]
            for column in table.columns {
                var property: [String: Any] = ["format": column.type, "type": jsonType(column.type)]
                if column.type.hasSuffix("[]") { property["items"] = ["type": "string"] }
                if table.primaryKey.contains(column.name) { property["description"] = "Note:\nThis is a Primary Key.<pk/>" }
                properties[column.name] = property
            }
            definitions[table.name] = ["type": "object", "properties": properties,
                                       "required": table.columns.filter { !$0.nullable && !$0.hasDefault }.map(\.name)]
            let ok = ["200": ["description": "OK"]]
            paths["/\(table.name)"] = [
                "get": ["tags": [table.name], "responses": ok],
                "post": ["tags": [table.name], "responses": ["201": ["description": "Created"]]],
                "patch": ["tags": [table.name], "responses": ["204": ["description": "No Content"]]],
                "delete": ["tags": [table.name], "responses": ["204": ["description": "No Content"]]],
            ]
        }
        for function in cache.functions.values.sorted(by: { $0.name < $1.name }) {
            let properties = Dictionary(function.arguments.map { ($0.name, ["format": $0.type, "type": jsonType($0.type)] as [String: Any]) }, uniquingKeysWith: { a, _ in a })
            paths["/rpc/\(function.name)"] = [
                "post": ["tags": ["(rpc) \(function.name)"], "produces": ["application/json"],
                         "parameters": [["in": "body", "name": "args", "required": true,
                                         "schema": ["type": "object", "properties": properties,
                                                    "required": function.arguments.filter { !$0.hasDefault }.map(\.name)]]],
                         "responses": ["200": ["description": "OK"]]],
            ]
        }
        let document: [String: Any] = [
            "swagger": "2.0",
            "info": ["title": "onboard REST API", "description": "PostgREST-compatible API of the public schema", "version": "1"],
            "basePath": "/rest/v1", "schemes": ["http"], "consumes": ["application/json"], "produces": ["application/json"],
            "paths": paths, "definitions": definitions,
        ]
        let data = (try? JSONSerialization.data(withJSONObject: document, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    static func jsonType(_ type: String) -> String {
        if type.hasSuffix("[]") { return "array" }
        switch type {
        case "integer", "bigint", "smallint": return "integer"
        case "numeric", "real", "double precision": return "number"
        case "boolean": return "boolean"
        case "json", "jsonb": return "object"
        default: return "string"
        }
    }
}
