/** A user error in a command: printed as one line without a stack trace, exit code 1 (2 for usage errors). */
export class CliError extends Error {
  readonly exitCode: number;

  constructor(message: string, exitCode = 1) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}
