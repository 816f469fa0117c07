/** The party of a payable that has no recipient: the merchant itself (PayableView.party). */
export const MERCHANT = 'merchant';
