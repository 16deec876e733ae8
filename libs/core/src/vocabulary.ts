/**
 * Enumerations of the public API shared by the gateway (REST schemas) and the
 * services (validation), kept in one place so the two cannot drift.
 */

export const CUSTOMER_TYPES = ['INDIVIDUAL', 'BUSINESS'] as const;

/** KYC status of an individual / KYB status of a business. */
export const VERIFICATION_STATUSES = ['UNVERIFIED', 'PENDING', 'APPROVED', 'REJECTED'] as const;

export const ENTITY_TYPES = [
  'SOLE_PROPRIETORSHIP',
  'PARTNERSHIP',
  'LLC',
  'CORPORATION',
  'S_CORPORATION',
  'NON_PROFIT',
  'OTHER',
] as const;

export const BUSINESS_TYPES = [
  'AGRICULTURE_FORESTRY_FISHING_AND_HUNTING',
  'MINING_QUARRYING_AND_OIL_AND_GAS_EXTRACTION',
  'UTILITIES',
  'CONSTRUCTION',
  'MANUFACTURING',
  'WHOLESALE_TRADE',
  'RETAIL_TRADE',
  'TRANSPORTATION_AND_WAREHOUSING',
  'INFORMATION',
  'FINANCE_AND_INSURANCE',
  'REAL_ESTATE_AND_RENTAL_AND_LEASING',
  'PROFESSIONAL_SCIENTIFIC_AND_TECHNICAL_SERVICES',
  'MANAGEMENT_OF_COMPANIES_AND_ENTERPRISES',
  'ADMINISTRATIVE_AND_SUPPORT_AND_WASTE_MANAGEMENT_AND_REMEDIATION_SERVICES',
  'EDUCATIONAL_SERVICES',
  'HEALTH_CARE_AND_SOCIAL_ASSISTANCE',
  'ARTS_ENTERTAINMENT_AND_RECREATION',
  'ACCOMMODATION_AND_FOOD_SERVICES',
  'OTHER_SERVICES',
  'PUBLIC_ADMINISTRATION',
] as const;

export const PURPOSES_OF_ACCOUNT = [
  'CONTRACTOR_PAYOUTS',
  'CREATOR_PAYOUTS',
  'EMPLOYEE_PAYOUTS',
  'MARKETPLACE_SELLER_PAYOUTS',
  'SUPPLIER_PAYMENTS',
  'CROSS_BORDER_B2B',
  'AR_AUTOMATION',
  'AP_AUTOMATION',
  'EMBEDDED_PAYMENTS',
  'PLATFORM_FEE_COLLECTION',
  'P2P_TRANSFERS',
  'CHARITABLE_DONATIONS',
  'OTHER',
] as const;

export const MONTHLY_TRANSACTION_COUNTS = [
  'COUNT_UNDER_10',
  'COUNT_10_TO_100',
  'COUNT_100_TO_500',
  'COUNT_500_TO_1000',
  'COUNT_OVER_1000',
] as const;

export const MONTHLY_TRANSACTION_VOLUMES = [
  'VOLUME_UNDER_10K',
  'VOLUME_10K_TO_100K',
  'VOLUME_100K_TO_1M',
  'VOLUME_1M_TO_10M',
  'VOLUME_OVER_10M',
] as const;

export const TRANSACTION_TYPES = ['INCOMING', 'OUTGOING'] as const;

/** The purposes of payment the API accepts (public PurposeOfPayment). */
export const PURPOSES_OF_PAYMENT = [
  'GIFT',
  'SELF',
  'GOODS_OR_SERVICES',
  'EDUCATION',
  'HEALTH_OR_MEDICAL',
  'REAL_ESTATE_PURCHASE',
  'TAX_PAYMENT',
  'LOAN_PAYMENT',
  'UTILITY_BILL',
  'DONATION',
  'TRAVEL',
  'OTHER',
] as const;

/** Payment rails (public PaymentRail): the network a payout to a bank account moves on. */
export const PAYMENT_RAILS = [
  'ACH',
  'BANK_TRANSFER',
  'FAST',
  'FASTER_PAYMENTS',
  'FEDNOW',
  'MOBILE_MONEY',
  'PAYNOW',
  'PIX',
  'RTP',
  'SEPA',
  'SEPA_INSTANT',
  'SPEI',
  'UPI',
  'WIRE',
] as const;

/** Names of customer/counterparty information fields (REST CustomerInfoFieldName). */
export const CUSTOMER_INFO_FIELDS = [
  'FULL_NAME',
  'BIRTH_DATE',
  'NATIONALITY',
  'PHONE_NUMBER',
  'EMAIL',
  'POSTAL_ADDRESS',
  'TAX_ID',
  'REGISTRATION_NUMBER',
  'USER_TYPE',
  'COUNTRY_OF_RESIDENCE',
  'ACCOUNT_IDENTIFIER',
  'FI_LEGAL_ENTITY_NAME',
  'FI_ADDRESS',
  'PURPOSE_OF_PAYMENT',
  'ULTIMATE_INSTITUTION_COUNTRY',
  'IDENTIFIER',
  'BUSINESS_TYPE',
  'COMPANY_LEGAL_NAME',
] as const;

/** What an API token may do. */
export const PERMISSIONS = ['VIEW', 'TRANSACT', 'MANAGE'] as const;

/** The world a platform lives in: sandbox platforms see the simulated world, production ones the real one. */
export const ENVIRONMENTS = ['SANDBOX', 'PRODUCTION'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

/**
 * The `accountInfo.accountType` variants of external accounts (the reference's 43); each has
 * its row in EXTERNAL_ACCOUNT_VARIANTS (external-accounts.ts).
 */
export const EXTERNAL_ACCOUNT_TYPES = [
  'GBP_ACCOUNT',
  'PHP_ACCOUNT',
  'SGD_ACCOUNT',
  'SPARK_WALLET',
  'LIGHTNING',
  'SOLANA_WALLET',
  'TRON_WALLET',
  'POLYGON_WALLET',
  'BASE_WALLET',
  'ETHEREUM_WALLET',
  'AED_ACCOUNT',
  'BRL_ACCOUNT',
  'BWP_ACCOUNT',
  'CAD_ACCOUNT',
  'DKK_ACCOUNT',
  'EUR_ACCOUNT',
  'HKD_ACCOUNT',
  'IDR_ACCOUNT',
  'INR_ACCOUNT',
  'KES_ACCOUNT',
  'MWK_ACCOUNT',
  'MXN_ACCOUNT',
  'MYR_ACCOUNT',
  'NGN_ACCOUNT',
  'RWF_ACCOUNT',
  'THB_ACCOUNT',
  'TZS_ACCOUNT',
  'UGX_ACCOUNT',
  'USD_ACCOUNT',
  'VND_ACCOUNT',
  'XAF_ACCOUNT',
  'XOF_ACCOUNT',
  'ZAR_ACCOUNT',
  'ZMW_ACCOUNT',
  'BDT_ACCOUNT',
  'COP_ACCOUNT',
  'EGP_ACCOUNT',
  'GHS_ACCOUNT',
  'GTQ_ACCOUNT',
  'HTG_ACCOUNT',
  'JMD_ACCOUNT',
  'PKR_ACCOUNT',
  'SLV_ACCOUNT',
] as const;
export type ExternalAccountType = (typeof EXTERNAL_ACCOUNT_TYPES)[number];

/**
 * External account states. Accounts are created ACTIVE; the others are set by an
 * operator or a partner's review. Only ACTIVE accounts are paid or pulled from.
 */
export const EXTERNAL_ACCOUNT_STATUSES = ['PENDING', 'ACTIVE', 'UNDER_REVIEW', 'INACTIVE'] as const;
export type ExternalAccountStatus = (typeof EXTERNAL_ACCOUNT_STATUSES)[number];

export const BENEFICIARY_VERIFICATION_STATUSES = [
  'MATCHED',
  'PARTIAL_MATCH',
  'NOT_MATCHED',
  'UNSUPPORTED',
  'CHECKED_BY_RECEIVING_FI',
  'PENDING',
] as const;
export type BeneficiaryVerificationStatus = (typeof BENEFICIARY_VERIFICATION_STATUSES)[number];

export const BANK_ACCOUNT_TYPES = ['CHECKING', 'SAVINGS'] as const;

export const PIX_KEY_TYPES = ['CPF', 'CNPJ', 'EMAIL', 'PHONE', 'RANDOM'] as const;
export type PixKeyType = (typeof PIX_KEY_TYPES)[number];

/** A postal address (customers, beneficiaries). */
export interface PostalAddress {
  line1: string;
  line2?: string;
  city?: string;
  state?: string;
  postalCode: string;
  country: string;
}

/** `accountOrWalletInfo` of a payment instruction (public PaymentInstructions); `accountType` says which fields are set. */
export interface AccountOrWalletInfo {
  accountType: string;
  accountNumber?: string;
  routingNumber?: string;
  paymentRails?: string[];
  bankName?: string;
  reference?: string;
  iban?: string;
  swiftCode?: string;
  sortCode?: string;
  clabeNumber?: string;
  bankCode?: string;
  branchCode?: string;
  vpa?: string;
  qrCode?: string;
  address?: string;
  assetType?: string;
  invoice?: string;
}

/** What an agent may do (reference AgentPermission); each gates the endpoints it names. */
export const AGENT_PERMISSIONS = [
  'VIEW_TRANSACTIONS',
  'CREATE_TRANSFERS',
  'CREATE_QUOTES',
  'EXECUTE_QUOTES',
  'MANAGE_EXTERNAL_ACCOUNTS',
] as const;
export type AgentPermission = (typeof AGENT_PERMISSIONS)[number];

/** Whether an agent action runs at once (AUTO) or waits for the platform (APPROVAL_REQUIRED). */
export const AGENT_EXECUTION_MODES = ['AUTO', 'APPROVAL_REQUIRED'] as const;
export type AgentExecutionMode = (typeof AGENT_EXECUTION_MODES)[number];

/** What an agent asks to do with money (reference AgentActionType). */
export const AGENT_ACTION_TYPES = ['EXECUTE_QUOTE', 'TRANSFER_OUT', 'TRANSFER_IN'] as const;
export type AgentActionType = (typeof AGENT_ACTION_TYPES)[number];

/** The public status of an agent action (reference AgentActionStatus). */
export const AGENT_ACTION_STATUSES = ['PENDING_APPROVAL', 'APPROVED', 'REJECTED', 'FAILED'] as const;
export type AgentActionStatus = (typeof AGENT_ACTION_STATUSES)[number];

// Compliance (beneficial owners, documents, verifications).

export const BENEFICIAL_OWNER_ROLES = [
  'UBO',
  'DIRECTOR',
  'COMPANY_OFFICER',
  'CONTROL_PERSON',
  'TRUSTEE',
  'GENERAL_PARTNER',
] as const;

/** `personalInfo.idType` of a beneficial owner. */
export const IDENTIFICATION_TYPES = ['SSN', 'ITIN', 'EIN', 'NON_US_TAX_ID'] as const;

export const DOCUMENT_TYPES = [
  'PASSPORT',
  'DRIVERS_LICENSE',
  'NATIONAL_ID',
  'PROOF_OF_ADDRESS',
  'BANK_STATEMENT',
  'TAX_RETURN',
  'CERTIFICATE_OF_INCORPORATION',
  'ARTICLES_OF_INCORPORATION',
  'ARTICLES_OF_ASSOCIATION',
  'STATE_REGISTRY_EXCERPT',
  'GOOD_STANDING_CERTIFICATE',
  'INFORMATION_STATEMENT',
  'INCUMBENCY_CERTIFICATE',
  'BUSINESS_LICENSE',
  'SHAREHOLDER_REGISTER',
  'POWER_OF_ATTORNEY',
  'UTILITY_BILL',
  'ELECTRICITY_BILL',
  'RENT_OR_LEASE_AGREEMENT',
  'DIRECTOR_REGISTRY',
  'TRUST_AGREEMENT',
  'STATE_COMPANY_REGISTRY',
  'PARTNERSHIP_CONTROL_AGREEMENT',
  'PARTNERSHIP_AGREEMENT',
  'SELFIE',
  'OTHER',
] as const;

export const DOCUMENT_SIDES = ['FRONT', 'BACK'] as const;

/** `verificationStatus` of a Verification (not the customer's kycStatus: see VERIFICATION_STATUSES). */
export const VERIFICATION_PROCESS_STATUSES = [
  'RESOLVE_ERRORS',
  'PENDING_MANUAL_REVIEW',
  'IN_PROGRESS',
  'APPROVED',
  'REJECTED',
  'READY_FOR_VERIFICATION',
] as const;

export const VERIFICATION_ERROR_TYPES = [
  'MISSING_FIELD',
  'INVALID_FIELD',
  'MISSING_LEGAL_PRESENCE_DOCUMENT',
  'MISSING_CONTROL_STRUCTURE_DOCUMENT',
  'MISSING_OWNERSHIP_STRUCTURE_DOCUMENT',
  'MISSING_PROOF_OF_ADDRESS_DOCUMENT',
  'MISSING_IDENTITY_DOCUMENT',
  'INVALID_DOCUMENT',
  'EXPIRED_DOCUMENT',
  'POOR_QUALITY_DOCUMENT',
  'SUSPECTED_FRAUD_DOCUMENT',
  'WRONG_DOCUMENT_TYPE',
  'INCOMPLETE_DOCUMENT',
  'UNREADABLE_DOCUMENT',
  'DOCUMENT_VERIFICATION_FAILED',
  'APPLICANT_SANCTIONED',
  'APPLICANT_FRAUD',
  'APPLICANT_CRIMINAL_RECORD',
  'APPLICANT_REJECTED',
  'MISSING_BENEFICIAL_OWNER',
] as const;
