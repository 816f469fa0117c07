export const TransactionResponseSchema = {
  type: 'object',
  example: {
    transactionId: '52580F07-80FD-3241-DAE2-BDC38138193A',
    operationId: '3',
    status: '8',
    message: 'APPROVED',
    errorCode: '',
    statusVersion: '2',
    order: { reference: 'A-1001', currency: '986', totalAmount: '150000', dateTime: '2026-11-22T15:12:14.794Z' },
    processor: { acquirer: '26', tid: '…', nsu: '…', authorizationCode: '…', returnCode: '00', returnMessage: 'Approved', numberOfPayments: '1', amount: '150000', capturedAmount: '150000', cancelledAmount: '0' },
    tokenCard: '',
    split: [{ recipient: '0b6f5c3e-6a4d-4f0e-9a1b-2c3d4e5f6a7b', grossAmount: '50000', feeAmount: '1495', netAmount: '48505', mode: 'PRORATA', liable: 'true' }],
    splitResidual: { grossAmount: '100000', feeAmount: '2990', netAmount: '97010' },
    processingFee: '4485',
    payables: [{ recipient: 'merchant', kind: 'capture', instalment: '1', dueDate: '2026-12-22', grossAmount: '100000', feeAmount: '2990', netAmount: '97010', status: 'pending' }],
  },
  description: 'split, splitResidual and processingFee are in cents; payables appear in report once settlement has written them.',
};
