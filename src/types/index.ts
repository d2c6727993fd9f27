/**
 * Type declarations the project supplies itself (no code):
 *   es2024-string.d.ts        String well-formedness (isWellFormed), missing from the ES2023 lib
 *   fs-native-extensions.d.ts the parts of fs-native-extensions kourai uses (the package ships no types)
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
