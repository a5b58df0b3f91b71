package org.raidfive.cli;

import org.raidfive.array.ConsistencyPolicy;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** {@code --consistency-policy resync|ppl}, as mdadm names the policies; anything else is a usage error. */
final class PolicyConverter implements ITypeConverter<ConsistencyPolicy> {
    @Override
    public ConsistencyPolicy convert(String value) {
        try {
            return ConsistencyPolicy.parse(value);
        } catch (IllegalArgumentException e) {
            throw new TypeConversionException(e.getMessage());
        }
    }
}
