import Foundation

/// The OpenAPI (Swagger 2.0) description PostgREST serves at the root (its Response/OpenAPI.hs),
/// built from the schema cache: one path per table (GET/POST/PATCH/DELETE, PUT when it has a
/// primary key) and per function (POST, and GET unless volatile), one definition per table.
/// The document is valid Swagger 2.0 (checked by openapi-spec-validator in the e2e run).
enum OpenAPI {
    static func document(_ cache: SchemaCache) -> String {
        var paths: [String: Any] = ["/": rootPath]
        var definitions: [String: Any] = [:]
        var parameters: [String: Any] = commonParameters
        for table in cache.tables.values.sorted(by: { $0.name < $1.name }) {
            var filters: [[String: String]] = []
            for column in table.columns {
                let key = "rowFilter.\(table.name).\(column.name)"
                parameters[key] = ["name": column.name, "in": "query", "required": false, "type": "string", "format": column.type]
                filters.append(["$ref": "#/parameters/\(key)"])
            }
            definitions[table.name] = definition(of: table)
            parameters["body.\(table.name)"] = [
                "name": table.name, "in": "body", "required": false, "description": table.name,
                "schema": ["$ref": "#/definitions/\(table.name)"]
            ]
            paths["/\(table.name)"] = operations(of: table, filters: filters)
        }
        // One path per name: its first overload describes it.
        for function in cache.functions.values.compactMap(\.first).sorted(by: { $0.name < $1.name }) {
            paths["/rpc/\(function.name)"] = operations(of: function)
        }
        let document: [String: Any] = [
            "swagger": "2.0",
            "info": ["title": "standard public schema", "description": "", "version": "onboard"],
            "basePath": "/", "schemes": ["http"],
            "consumes": ["application/json", "application/vnd.pgrst.object+json;nulls=stripped", "application/vnd.pgrst.object+json", "text/csv"],
            "produces": ["application/json", "application/vnd.pgrst.object+json;nulls=stripped", "application/vnd.pgrst.object+json", "text/csv"],
            "paths": paths, "definitions": definitions, "parameters": parameters
        ]
        let data = (try? JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// The root path: this document.
    static var rootPath: [String: Any] {
        [
            "get": [
                "tags": ["Introspection"], "summary": "OpenAPI description (this document)",
                "produces": ["application/openapi+json", "application/json"],
                "responses": ["200": ["description": "OK"]]
            ]
        ]
    }

    /// A table's definition: its columns' types and defaults, the required ones, its comment.
    static func definition(of table: SchemaCache.Table) -> [String: Any] {
        var properties: [String: Any] = [:]
        for column in table.columns {
            var property: [String: Any] = ["format": column.type, "type": jsonType(column.type)]
            if column.type.hasSuffix("[]") { property["items"] = ["type": jsonType(String(column.type.dropLast(2)))] }
            if let expression = column.defaultExpression {
                // A default must be a value of the column's type; an expression (now(),
                // gen_random_uuid()) is described, not given as a value.
                if let value = defaultValue(expression, type: column.type) {
                    property["default"] = value
                } else {
                    property["description"] = "Default: \(expression)"
                }
            }
            if table.primaryKey.contains(column.name) { property["description"] = "Note:\nThis is a Primary Key.<pk/>" }
            properties[column.name] = property
        }
        var definition: [String: Any] = ["type": "object", "properties": properties]
        // Swagger 2.0: `required` has at least one item, or is absent.
        let required = table.columns.filter { !$0.nullable && !$0.hasDefault }.map(\.name)
        if !required.isEmpty { definition["required"] = required }
        if let description = table.description { definition["description"] = description }
        return definition
    }

    /// A table's operations (`filters`: references to its row filter parameters).
    static func operations(of table: SchemaCache.Table, filters: [[String: String]]) -> [String: Any] {
        let refs = { (names: [String]) in names.map { ["$ref": "#/parameters/\($0)"] } }
        let body: [String: Any] = ["$ref": "#/parameters/body.\(table.name)"]
        var operations: [String: Any] = [
            "get": [
                "tags": [table.name], "parameters": filters + refs(["select", "order", "range", "rangeUnit", "offset", "limit", "preferCount"]),
                "responses": [
                    "200": ["description": "OK", "schema": ["type": "array", "items": ["$ref": "#/definitions/\(table.name)"]]],
                    "206": ["description": "Partial Content"]
                ]
            ],
            "patch": [
                "tags": [table.name], "parameters": filters + [body] + refs(["preferReturn"]),
                "responses": ["204": ["description": "No Content"]]
            ],
            "delete": [
                "tags": [table.name], "parameters": filters + refs(["preferReturn"]),
                "responses": ["204": ["description": "No Content"]]
            ]
        ]
        if table.insertable {
            operations["post"] = [
                "tags": [table.name], "parameters": [body] + refs(["select", "preferPost"]),
                "responses": ["201": ["description": "Created"]]
            ]
            if !table.primaryKey.isEmpty {
                operations["put"] = [
                    "tags": [table.name], "parameters": filters + [body] + refs(["preferReturn"]),
                    "responses": ["200": ["description": "OK"], "201": ["description": "Created"], "204": ["description": "No Content"]]
                ]
            }
        }
        return operations
    }

    /// A function's operations: POST with its arguments as the body, GET unless it is volatile.
    static func operations(of function: SchemaCache.Function) -> [String: Any] {
        var properties: [String: Any] = [:]
        for argument in function.arguments {
            var property: [String: Any] = ["format": argument.type, "type": jsonType(argument.type)]
            if argument.type.hasSuffix("[]") { property["items"] = ["type": jsonType(String(argument.type.dropLast(2)))] }
            properties[argument.name] = property
        }
        var arguments: [String: Any] = ["type": "object", "properties": properties]
        let required = function.arguments.filter { !$0.hasDefault }.map(\.name)
        if !required.isEmpty { arguments["required"] = required }
        let ok = ["200": ["description": "OK"]]
        var operations: [String: Any] = [
            "post": [
                "tags": ["(rpc) \(function.name)"], "produces": ["application/json", "application/vnd.pgrst.object+json"],
                "parameters": [
                    ["in": "body", "name": "args", "required": true, "schema": arguments],
                    ["$ref": "#/parameters/preferParams"]
                ],
                "responses": ok
            ]
        ]
        if function.volatility != .volatile {
            operations["get"] = [
                "tags": ["(rpc) \(function.name)"], "produces": ["application/json", "application/vnd.pgrst.object+json"],
                "parameters": function.arguments.map { argument -> [String: Any] in
                    queryParameter(argument)
                },
                "responses": ok
            ]
        }
        return operations
    }

    /// PostgREST's shared query and header parameters.
    static var commonParameters: [String: Any] {
        [
            "select": ["name": "select", "in": "query", "required": false, "type": "string", "description": "Filtering Columns"],
            "order": ["name": "order", "in": "query", "required": false, "type": "string", "description": "Ordering"],
            "range": ["name": "Range", "in": "header", "required": false, "type": "string", "description": "Limiting and Pagination"],
            "rangeUnit": [
                "name": "Range-Unit", "in": "header", "required": false, "type": "string", "default": "items", "description": "Limiting and Pagination"
            ],
            "offset": ["name": "offset", "in": "query", "required": false, "type": "string", "description": "Limiting and Pagination"],
            "limit": ["name": "limit", "in": "query", "required": false, "type": "string", "description": "Limiting and Pagination"],
            "preferCount": ["name": "Prefer", "in": "header", "required": false, "type": "string", "enum": ["count=none"], "description": "Preference"],
            "preferReturn": [
                "name": "Prefer", "in": "header", "required": false, "type": "string", "enum": ["return=representation", "return=minimal", "return=none"],
                "description": "Preference"
            ],
            "preferPost": [
                "name": "Prefer", "in": "header", "required": false, "type": "string",
                "enum": ["return=representation", "return=minimal", "return=none", "resolution=ignore-duplicates", "resolution=merge-duplicates"],
                "description": "Preference"
            ],
            "preferParams": [
                "name": "Prefer", "in": "header", "required": false, "type": "string", "enum": ["params=single-object"], "description": "Preference"
            ]
        ]
    }

    /// A query parameter may be a string, number, integer, boolean or array (of those) in Swagger
    /// 2.0, never an object: JSON arguments travel as text.
    static func queryParameter(_ argument: SchemaCache.Function.Argument) -> [String: Any] {
        var parameter: [String: Any] = ["name": argument.name, "in": "query", "required": !argument.hasDefault, "format": argument.type]
        let type = jsonType(argument.type)
        parameter["type"] = type == "object" ? "string" : type
        if type == "array" {
            let element = jsonType(String(argument.type.dropLast(2)))
            parameter["items"] = ["type": element == "object" ? "string" : element]
        }
        return parameter
    }

    /// The value of a constant default expression as the catalog prints it (`5`, `'x'::text`,
    /// `'{}'::text[]`, `true`), or nil for anything computed.
    static func defaultValue(_ expression: String, type: String) -> Any? {
        var text = Substring(expression)
        // Strip one trailing cast: `'x'::text`, `'{}'::text[]`, `'a'::character varying`.
        if let cast = text.range(of: "::", options: .backwards) { text = text[..<cast.lowerBound] }
        if text.hasPrefix("("), text.hasSuffix(")") { text = text.dropFirst().dropLast() }
        let literal: String?
        if text.count >= 2, text.hasPrefix("'"), text.hasSuffix("'") {
            literal = String(text.dropFirst().dropLast()).replacingOccurrences(of: "''", with: "'")
        } else {
            literal = nil
        }
        switch jsonType(type) {
        case "integer": return Int(literal ?? String(text))
        case "number": return Double(literal ?? String(text))
        case "boolean":
            switch (literal ?? String(text)).lowercased() {
            case "true": return true
            case "false": return false
            default: return nil
            }
        case "array": return literal == "{}" ? [Any]() : nil
        case "object": return nil
        default: return literal
        }
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
