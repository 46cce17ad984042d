import { status, type ServiceError } from "@grpc/grpc-js";

/** A call that failed. `code`: the gRPC status name ("NOT_FOUND", "UNAVAILABLE", …), to switch on; `details`: the
 * server's message; `attempts`: how many times it was sent (more than one only for a retried idempotent call);
 * `errorId`: for INTERNAL, the id the server logged with the traceback. */
export class AcmError extends Error {
  readonly code: string;
  readonly details: string;
  readonly attempts: number;

  constructor(code: string, details: string, attempts = 1) {
    super(`${code}: ${details}${attempts > 1 ? ` (after ${attempts} attempts)` : ""}`);
    this.name = "AcmError";
    this.code = code;
    this.details = details;
    this.attempts = attempts;
  }

  get errorId(): string {
    return /internal error ([0-9a-f]+)/.exec(this.details)?.[1] ?? "";
  }

  static fromServiceError(error: ServiceError, attempts: number): AcmError {
    return new AcmError(status[error.code] ?? "UNKNOWN", error.details, attempts);
  }
}
