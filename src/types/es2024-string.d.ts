// ES2024 String well-formedness (Node 20 has it; the project's lib is ES2023).
interface String {
  isWellFormed(): boolean;
}
