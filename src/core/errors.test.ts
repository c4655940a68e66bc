import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { AppError, GRPC_STATUS } from './errors.ts';

describe('gRPC status table', () => {
  it('names every status with the number grpc-js gives it', () => {
    for (const [name, code] of Object.entries(GRPC_STATUS)) expect([name, code]).toEqual([name, status[name as keyof typeof status]]);
    const grpcNames = Object.keys(status).filter((k) => Number.isNaN(Number(k)));
    expect(Object.keys(GRPC_STATUS).sort()).toEqual(grpcNames.sort());
  });

  it('maps a bad parameter to INVALID_ARGUMENT and an unknown caller to UNAUTHENTICATED', () => {
    expect(new AppError('parameter_invalid', 'x').grpcCode).toBe(status.INVALID_ARGUMENT);
    expect(new AppError('unauthorized', 'x').grpcCode).toBe(status.UNAUTHENTICATED);
    expect(new AppError('stale_object', 'x').grpcCode).toBe(status.ABORTED);
  });
});
